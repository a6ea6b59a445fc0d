"""Codex figures a rollout gets wrong or leaves implicit: the estimate Codex logs after a
compaction, and the tools the API runs itself (``web_search_call``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sessions_expect import records, report

from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.config import Thresholds
from ctxtop.engine.live.session import build_view
from ctxtop.engine.sessions.sample import build_sample
from ctxtop.engine.tokens.short import short_tokens

REAL = (
    Path(__file__).parent
    / "data/real/codex/generated-cli-0.169.0/sessions/2026/11/22"
    / "rollout-2026-11-22T14-09-59-01a20397-a65f-7be0-a82b-63e59b296bcb.jsonl"
)
WINDOW = 258_400
BEFORE = 209_950  # the summarising request's prompt
CODEX_ESTIMATE = 940_499  # what Codex 0.104 logged as the new history's size
NEXT_PROMPT = 14_210  # the first request after the compaction


def _line(kind: str, payload: dict[str, Any], second: int) -> str:
    stamp = f"2026-02-10T09:00:{second:02d}.000Z"
    return json.dumps({"timestamp": stamp, "type": kind, "payload": payload})


def _usage(prompt: int, cached: int, output: int) -> dict[str, int]:
    return {
        "input_tokens": prompt,
        "cached_input_tokens": cached,
        "output_tokens": output,
        "reasoning_output_tokens": 0,
        "total_tokens": prompt + output,
    }


def _token_count(total: dict[str, int], last: dict[str, int], second: int) -> list[str]:
    info = {"total_token_usage": total, "last_token_usage": last, "model_context_window": WINDOW}
    line = _line("event_msg", {"type": "token_count", "info": info, "rate_limits": None}, second)
    return [line, line]  # Codex writes every token_count twice


def codex_0_104_rollout(path: Path, *, after_compaction: bool = True) -> Path:
    """A rollout as Codex 0.104 wrote one that compacted (built by hand from the format in
    agent-log-formats.md §2.2-2.5, no 0.104 binary being at hand; the figures are those of a
    real 0.104 log): no ``ordinal``, no ``token_usage_record``; after the ``compacted`` record a
    token_count whose running total did not change and whose last usage is zero but for
    ``total_tokens``, Codex's estimate of the new history, here larger than the window."""
    first = _usage(BEFORE, 190_000, 1_800)
    zero = {**_usage(0, 0, 0), "total_tokens": CODEX_ESTIMATE}
    second = _usage(NEXT_PROMPT, 0, 300)
    running = {key: first[key] + second[key] for key in first}
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix"}]}
    summary = "Another language model started to solve this problem; its summary: tests fixed."
    lines = [
        _line("session_meta", {"id": "0194f1a2-0000-7000-8000-000000000104",
                               "cli_version": "0.104.0", "cwd": "/home/dev/calc"}, 0),
        _line("turn_context", {"cwd": "/home/dev/calc", "model": "gpt-5.3-codex"}, 1),
        _line("event_msg", {"type": "task_started", "model_context_window": WINDOW}, 1),
        _line("response_item", user, 2),
        _line("response_item", {"type": "function_call", "name": "exec_command",
                                "arguments": '{"cmd":"pytest"}', "call_id": "call_1"}, 3),
        _line("response_item", {"type": "function_call_output", "call_id": "call_1",
                                "output": "1 failed"}, 4),
        *_token_count(first, first, 5),
        _line("compacted", {"message": summary, "replacement_history": [
            user, {"type": "message", "role": "user",
                   "content": [{"type": "input_text", "text": summary}]}]}, 6),
        *_token_count(first, zero, 7),
    ]  # fmt: skip
    if after_compaction:
        answer = {"type": "message", "role": "assistant",
                  "content": [{"type": "output_text", "text": "Done."}]}  # fmt: skip
        lines += [_line("response_item", answer, 8), *_token_count(running, second, 8)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_codex_s_post_compaction_estimate_over_the_window_is_not_the_after(
    tmp_path: Path,
) -> None:
    got = report(codex_0_104_rollout(tmp_path / "rollout.jsonl"))
    assert got["context_window"] == WINDOW
    [compaction] = got["compactions"]
    assert compaction["pre_tokens"] == BEFORE
    assert compaction["post_tokens"] == NEXT_PROMPT
    assert compaction["post_tokens_source"] == "request"


def test_before_the_next_request_the_context_is_estimated_not_codexs_figure(
    tmp_path: Path,
) -> None:
    path = codex_0_104_rollout(tmp_path / "rollout.jsonl", after_compaction=False)
    got = report(path)
    [compaction] = got["compactions"]
    assert compaction["post_tokens"] is None
    assert got["context_tokens"]["source"] == "estimated"
    assert 0 < got["context_tokens"]["value"] < WINDOW
    reader = SessionReader(path)
    read_all(reader)
    assert reader.adapter is not None
    view = build_view(build_sample(reader.adapter), Thresholds())
    [event] = [e for e in view.events if e.kind == "compaction"]
    assert event.text == f"auto compaction: {short_tokens(BEFORE)} -> ?"  # not 940.5k


def test_an_estimate_within_the_window_is_labelled_as_one(tmp_path: Path) -> None:
    """0.169 logs a plausible estimate: shown until the next request, marked as an estimate."""
    rows = records(REAL)
    compacted = next(i for i, r in enumerate(rows, 1) if r["type"] == "compacted")
    lines = REAL.read_bytes().splitlines(keepends=True)
    head = tmp_path / REAL.name
    head.write_bytes(b"".join(lines[: compacted + 4]))  # up to the estimate, no request yet
    estimate = rows[compacted + 3]["payload"]["info"]["last_token_usage"]["total_tokens"]
    got = report(head)
    assert got["compactions"][0]["post_tokens"] == estimate
    assert got["compactions"][0]["post_tokens_source"] == "estimate"
    reader = SessionReader(head)
    read_all(reader)
    assert reader.adapter is not None
    view = build_view(build_sample(reader.adapter), Thresholds())
    assert [e.text for e in view.events if e.kind == "compaction"] == [
        f"auto compaction: 1.5k -> ≈{estimate / 1000:.1f}k"
    ]


def test_web_searches_are_tool_calls_under_their_own_name(tmp_path: Path) -> None:
    """Codex logs a search the API ran as ``web_search_call`` (§2.3), without a call id or an
    output item; inserted here into a real 0.169 rollout before its first usage record."""
    lines = REAL.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '"token_usage_record"' in line)
    searches = [
        json.dumps({"timestamp": "2026-11-22T14:10:00.000Z", "type": "response_item",
                    "payload": {"type": "web_search_call", "status": "completed",
                                "action": {"type": "search", "query": query}}}) + "\n"
        for query in ("pytest fixtures scope", "python decimal rounding")
    ]  # fmt: skip
    target = tmp_path / REAL.name
    target.write_text("".join([*lines[:at], *searches, *lines[at:]]))
    got, clean = report(target), report(REAL)
    tools = {tool["name"]: tool for tool in got["tools"]}
    assert tools["web_search"]["calls"] == 2
    assert tools["web_search"]["result_tokens"] == 0  # the API keeps the results to itself
    others = [tool for tool in got["tools"] if tool["name"] != "web_search"]
    assert others == clean["tools"]
    assert got["api_requests"] == clean["api_requests"]

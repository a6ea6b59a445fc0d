"""The generic OpenAI-messages format: JSON arrays and JSONL, with and without usage."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from sessions_expect import ENC, report

from ctxtop.engine.agents.session_reader import read_session
from ctxtop.engine.cli.main import main
from ctxtop.engine.sessions.tokenizer_factor import PRIOR_WEIGHT

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions" / "openai-messages"
WITH_USAGE = sorted(p for p in SAMPLES.iterdir() if p.suffix in (".json", ".jsonl"))


def messages(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return json.loads(text)  # type: ignore[no-any-return]
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def content_text(message: dict[str, Any]) -> list[str]:
    texts = [message["content"]] if isinstance(message.get("content"), str) else []
    texts += [call["function"]["arguments"] for call in message.get("tool_calls") or []]
    return [text for text in texts if text]


@pytest.mark.parametrize("path", WITH_USAGE, ids=lambda path: path.name)
def test_report_matches_the_messages(path: Path) -> None:
    rows = messages(path)
    got = report(path)
    assert got["agent"] == "openai-messages"
    usages = [m["usage"] for m in rows if m["role"] == "assistant" and "usage" in m]
    assert got["api_requests"] == len(usages)

    def cached(usage: dict[str, Any]) -> int:
        return int(usage.get("prompt_tokens_details", {}).get("cached_tokens", 0))

    assert got["totals"] == {
        "input": sum(u["prompt_tokens"] - cached(u) for u in usages),
        "output": sum(u["completion_tokens"] for u in usages),
        "cache_read": sum(cached(u) for u in usages),
        "cache_write": 0,
    }
    names = {c["id"]: c["function"]["name"] for m in rows for c in m.get("tool_calls") or []}
    tools: dict[str, list[int]] = {}
    for m in rows:
        if m["role"] == "tool":
            entry = tools.setdefault(names[m["tool_call_id"]], [0, 0])
            entry[0] += 1
            entry[1] += ENC.count(m["content"])
    assert {t["name"]: [t["calls"], t["result_tokens"]] for t in got["tools"]} == tools
    assert got["autocompact_at"] is None
    assert got["skipped_lines"] == []
    context = got["context_tokens"]
    if not usages:
        everything = [text for m in rows for text in content_text(m)]
        assert context["source"] == "estimated"
        assert context["value"] == sum(ENC.count(text) for text in everything)
        assert got["last_request"] is None
        return
    last_index = max(i for i, m in enumerate(rows) if "usage" in m)
    last = rows[last_index]["usage"]
    assert got["last_request"]["input_tokens_total"] == last["prompt_tokens"]
    assert got["last_request"]["cache_read_tokens"] == cached(last)
    assert got["last_request"]["output_tokens"] == last["completion_tokens"]
    after = [text for m in rows[last_index + 1 :] for text in content_text(m)]
    # The tokenizer factor: the growth the API reported between the first and the last request
    # with usage, over the tokenizer's count of the messages added in between, weighed with a
    # starting guess of 1 (engine/sessions/tokenizer_factor.py).
    first_index = min(i for i, m in enumerate(rows) if "usage" in m)
    growth = last["prompt_tokens"] - rows[first_index]["usage"]["prompt_tokens"]
    between = [text for m in rows[first_index:last_index] for text in content_text(m)]
    counted = sum(ENC.count(text) for text in between)
    factor = (growth + PRIOR_WEIGHT) / (counted + PRIOR_WEIGHT) if first_index < last_index else 1
    estimate = round(sum(ENC.count(text) for text in after) * factor)
    assert context["tokenizer_factor"] == pytest.approx(factor)
    assert context["value"] == last["prompt_tokens"] + last["completion_tokens"] + estimate
    assert context["source"] == ("calibrated" if estimate else "reported")


def test_jsonl_and_array_of_the_same_chat_agree(tmp_path: Path) -> None:
    rows = messages(SAMPLES / "agent-loop.jsonl")
    as_array = tmp_path / "chat.json"
    as_array.write_text(json.dumps(rows))
    as_envelope = tmp_path / "envelope.json"
    as_envelope.write_text(json.dumps({"model": "gpt-5", "messages": rows}, indent=2))
    expected = report(SAMPLES / "agent-loop.jsonl")
    for path in (as_array, as_envelope):
        got = report(path)
        for key in ("api_requests", "totals", "tools", "context_tokens", "model"):
            assert got[key] == expected[key]


def test_a_tool_call_written_twice_counts_once(tmp_path: Path) -> None:
    rows = messages(SAMPLES / "agent-loop.jsonl")
    doubled = tmp_path / "doubled.jsonl"
    # The same assistant message (same id) logged twice: one response, one call.
    lines = [json.dumps(m) for m in rows]
    lines.insert(3, lines[2])
    doubled.write_text("\n".join(lines) + "\n")
    expected = report(SAMPLES / "agent-loop.jsonl")
    got = report(doubled)
    assert got["api_requests"] == expected["api_requests"]
    assert got["totals"] == expected["totals"]
    assert got["tools"] == expected["tools"]


def test_breakdown_of_what_the_context_holds() -> None:
    path = SAMPLES / "agent-loop.jsonl"
    rows = messages(path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", str(path), "--json", "--breakdown"]) == 0
    got = json.loads(out.getvalue())
    expected: dict[str, int] = {}

    def add(category: str, text: str) -> None:
        expected[category] = expected.get(category, 0) + ENC.count(text)

    for m in rows:
        if m["role"] == "system":
            add("instructions", m["content"])
        elif m["role"] == "tool":
            add("tool_results", m["content"])
        elif m.get("content"):
            add(m["role"], m["content"])
        for call in m.get("tool_calls") or []:
            add("tool_calls", call["function"]["arguments"])
    breakdown = got["context_breakdown"]
    # Each kind's count times the session's tokenizer factor (the context figure's), rounded
    # so that the kinds add up to the total times the factor.
    factor = breakdown["tokenizer_factor"]
    assert factor == got["context_tokens"]["tokenizer_factor"] != 1
    calibrated: dict[str, int] = {}
    running = shown = 0
    for entry in breakdown["categories"]:
        running += expected[entry["category"]]
        calibrated[entry["category"]] = round(running * factor) - shown
        shown = round(running * factor)
    assert {c["category"]: c["tokens"] for c in breakdown["categories"]} == calibrated
    assert calibrated.keys() == expected.keys()
    assert breakdown["estimated_total"] == round(sum(expected.values()) * factor)
    assert breakdown["unattributed"] == got["context_tokens"]["value"] - shown


def odd_role_session(path: Path) -> Path:
    """A chat whose 47th message has a list for its role: past the lines detection reads."""
    lines: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}]
    for n in range(15):
        call = {"id": f"call_{n}", "type": "function"}
        call["function"] = {"name": "read", "arguments": "{}"}
        lines += [
            {"role": "user", "content": f"question {n}"},
            {"role": "assistant", "content": None, "tool_calls": [call], "usage": USAGE},
            {"role": "tool", "tool_call_id": f"call_{n}", "content": "file text " * 40},
        ]
    lines += [{"role": ["user"], "content": "odd"}, {"role": "user", "content": "again"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


USAGE = {"prompt_tokens": 500, "completion_tokens": 5}


def test_a_role_that_is_a_list_is_no_chat_message(tmp_path: Path) -> None:
    """Such a line is skipped as no chat message (not as a crash), and an edit of the log
    previews (it stopped with a TypeError traceback)."""
    session = odd_role_session(tmp_path / "odd.jsonl")
    state = read_session(session)
    assert [(s.line, s.reason) for s in state.skipped] == [
        (47, "not a chat message (no known role)")
    ]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["edit", "--dry-run", str(session)]) == 0
    assert "dry run: nothing written" in out.getvalue()

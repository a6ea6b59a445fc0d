"""``ctxtop report --json`` on a real Gemini CLI (0.61.0) session against figures worked out here
from the raw JSON lines (nothing below calls the Gemini adapter)."""

from __future__ import annotations

import contextlib
import io
import json
import math
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from sessions_expect import ENC, records, report
from test_sessions_tail import _append
from test_sessions_tail import _report as _reader_report

from ctxtop.engine.agents.session_reader import SessionReader
from ctxtop.engine.cli.main import main
from ctxtop.engine.live.locate import where

GEMINI_HOME = Path(__file__).parent / "data" / "generated" / "gemini-cli"
CHATS = GEMINI_HOME / "tmp" / "calc-gemini" / "chats"
SESSION_ID = "196d3f0b-bbef-423c-a372-76f8141d3f43"
MAIN = CHATS / "session-2026-11-23T03-12-196d3f0b.jsonl"
SUBAGENT = CHATS / SESSION_ID / "f10f71a1-e631-4616-b622-bb4582c67494.jsonl"
SAMPLE_HOME = Path(__file__).resolve().parents[2] / "sample_sessions" / "gemini-cli"
SAMPLE = SAMPLE_HOME / ".gemini" / "tmp" / "calc-gemini" / "chats" / MAIN.name


# -- independent expectations ------------------------------------------------------------------


def history_messages(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every message record in file order, those inside ``$set`` history arrays included."""
    out: list[dict[str, Any]] = []
    for row in rows:
        if isinstance(row.get("id"), str):
            out.append(row)
        elif isinstance(row.get("$set"), dict) and isinstance(row["$set"].get("messages"), list):
            out.extend(row["$set"]["messages"])
    return out


def responses(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Message id → its last ``tokens`` (Gemini writes an answered message more than once)."""
    out: dict[str, dict[str, int]] = {}
    for message in history_messages(rows):
        if message.get("type") == "gemini" and isinstance(message.get("tokens"), dict):
            out[message["id"]] = message["tokens"]
    return out


def prompt_total(tokens: dict[str, int]) -> int:
    return tokens["input"] + tokens.get("tool", 0)


def expected_totals(tokens: list[dict[str, int]]) -> dict[str, int]:
    return {
        "input": sum(t["input"] - t["cached"] + t.get("tool", 0) for t in tokens),
        "output": sum(t["output"] + t["thoughts"] for t in tokens),
        "cache_read": sum(t["cached"] for t in tokens),
        "cache_write": 0,
    }


def parts_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [part for part in content if isinstance(part, dict)] if isinstance(content, list) else []


def expected_tools(rows: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Tool name → (calls, result tokens): each call id once, its last result text."""
    names: dict[str, str] = {}
    results: dict[str, str] = {}
    for message in history_messages(rows):
        for call in message.get("toolCalls") or []:
            names.setdefault(call["id"], call["name"])
            for part in call.get("result") or []:
                response = part["functionResponse"]["response"]
                results[call["id"]] = response.get("output", response.get("error"))
        for part in parts_of(message):
            if "functionCall" in part:
                names.setdefault(part["functionCall"]["id"], part["functionCall"]["name"])
            if "functionResponse" in part:
                response = part["functionResponse"]["response"]
                results[part["functionResponse"]["id"]] = response.get(
                    "output", response.get("error")
                )
    out: dict[str, tuple[int, int]] = {}
    for call_id, name in names.items():
        calls, tokens = out.get(name, (0, 0))
        out[name] = (calls + 1, tokens + ENC.count(results.get(call_id, "")))
    return out


def context_estimate(messages: list[dict[str, Any]]) -> int:
    """Tokenizer count of what a history holds: texts, call arguments, result outputs."""
    total = 0
    for message in messages:
        for part in parts_of(message):
            if "text" in part:
                total += ENC.count(part["text"])
            elif "functionCall" in part:
                total += ENC.count(json.dumps(part["functionCall"]["args"], ensure_ascii=False))
            elif "functionResponse" in part:
                total += ENC.count(part["functionResponse"]["response"]["output"])
    return total


# -- the report ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return records(MAIN)


@pytest.fixture(scope="module")
def got() -> dict[str, Any]:
    return report(MAIN)


def test_identity_window_and_compression_threshold(
    rows: list[dict[str, Any]], got: dict[str, Any]
) -> None:
    assert got["agent"] == "gemini-cli"
    assert got["session_id"] == rows[0]["sessionId"] == SESSION_ID
    assert got["model"] == [m["model"] for m in history_messages(rows) if m.get("model")][-1]
    assert got["cwd"] == (CHATS.parent / ".project_root").read_text().strip()
    # Gemini CLI's tokenLimit() for a Gemini model, from the registry (the log has no window).
    assert (got["context_window"], got["context_window_source"]) == (1_048_576, "cli")
    # This run lowered model.compressionThreshold in settings.json so compression would fire.
    threshold = json.loads((GEMINI_HOME / "settings.json").read_text())["model"][
        "compressionThreshold"
    ]
    assert got["autocompact_at"] == math.ceil(threshold * 1_048_576)
    assert got["skipped_lines"] == []


def test_usage_once_per_message_id_with_thoughts_in_output(
    rows: list[dict[str, Any]], got: dict[str, Any]
) -> None:
    written = [r for r in rows if r.get("type") == "gemini" and isinstance(r.get("tokens"), dict)]
    by_id = responses(rows)
    assert len(written) > len(by_id)  # the log does write message ids twice
    assert any(t["thoughts"] for t in by_id.values())  # and reports thoughts apart
    assert got["api_requests"] == len(by_id)
    assert got["totals"] == expected_totals(list(by_id.values()))
    assert got["totals"]["output"] > sum(t["output"] for t in by_id.values())
    last = written[-1]["tokens"]
    assert got["last_request"]["input_tokens_total"] == prompt_total(last)
    assert got["last_request"]["cache_read_tokens"] == last["cached"]
    assert got["last_request"]["output_tokens"] == last["output"] + last["thoughts"]
    assert got["last_request"]["cache_write_tokens"] == 0
    # Nothing was sent after the last answer: the context is what that request reported.
    assert got["context_tokens"]["source"] == "reported"
    assert got["context_tokens"]["value"] == prompt_total(last) + last["output"] + last["thoughts"]


def test_tools_count_each_call_once(rows: list[dict[str, Any]], got: dict[str, Any]) -> None:
    tools = {row["name"]: (row["calls"], row["result_tokens"]) for row in got["tools"]}
    assert tools == expected_tools(rows)
    assert tools["read_file"][0] == 4


def test_a_set_with_a_state_snapshot_replaces_the_history(
    rows: list[dict[str, Any]], got: dict[str, Any], tmp_path: Path
) -> None:
    snapshots = [
        (line, row["$set"]["messages"])
        for line, row in enumerate(rows, 1)
        if "messages" in row.get("$set", {})
        and any(
            part.get("text", "").startswith("<state_snapshot>")
            for message in row["$set"]["messages"]
            for part in parts_of(message)
        )
    ]
    assert len(snapshots) == 1
    line, history = snapshots[0]
    before = [r["tokens"] for r in rows[: line - 1] if isinstance(r.get("tokens"), dict)]
    assert got["compactions"] == [
        {
            "trigger": "unknown",
            "pre_tokens": prompt_total(before[-1]),
            "post_tokens": None,
            "post_tokens_source": None,
            "after_tokens": None,  # nothing logged: nothing to add the system prompt to
            "line": line,
            "timestamp": rows[line - 1]["$set"]["lastUpdated"],
        }
    ]
    # Cut right after that line: the context is the new history alone, counted by the tokenizer
    # (the request it replaced is no longer on it).
    cut = tmp_path / "chats" / MAIN.name
    cut.parent.mkdir()
    cut.write_bytes(b"".join(MAIN.read_bytes().splitlines(keepends=True)[:line]))
    context = report(cut)["context_tokens"]
    assert context["source"] == "estimated"
    assert context["value"] == context_estimate(history)


def test_the_subagent_chat_is_counted_apart(
    rows: list[dict[str, Any]], got: dict[str, Any]
) -> None:
    child_rows = records(SUBAGENT)
    child = responses(child_rows)
    call = next(
        call
        for m in history_messages(rows)
        for call in m.get("toolCalls") or []
        if "agentId" in call
    )
    assert got["subagents"] == [
        {
            "id": SUBAGENT.stem,
            "description": call["args"]["agent_name"],
            "parent_tool_call_id": call["id"],
            "model": child_rows[-2]["model"],
            "file": str(SUBAGENT),
            "api_requests": len(child),
            "last_input_tokens_total": prompt_total(list(child.values())[-1]),
            "totals": expected_totals(list(child.values())),
            "context_tokens": got["subagents"][0]["context_tokens"],
        }
    ]
    # The parent's totals are its own file's alone.
    assert got["totals"] == expected_totals(list(responses(rows).values()))


# -- hand-made variations of the real log -------------------------------------------------------


def test_found_from_its_content_under_any_name(tmp_path: Path, got: dict[str, Any]) -> None:
    renamed = tmp_path / "notes.txt"
    shutil.copyfile(MAIN, renamed)
    other = report(renamed)
    assert other["agent"] == "gemini-cli"
    assert (other["api_requests"], other["totals"]) == (got["api_requests"], got["totals"])


def test_a_bad_line_is_reported_with_its_number(tmp_path: Path, got: dict[str, Any]) -> None:
    lines = MAIN.read_bytes().splitlines(keepends=True)
    broken = tmp_path / MAIN.name
    broken.write_bytes(b"".join([*lines[:4], b'{"id": "x", "type": "gemini", "tok\n', *lines[4:]]))
    other = report(broken)
    assert [(s["line"], s["reason"].split(":")[0]) for s in other["skipped_lines"]] == [
        (5, "invalid JSON")
    ]
    assert (other["api_requests"], other["totals"]) == (got["api_requests"], got["totals"])


def test_a_malformed_tokens_record_is_skipped_by_line(tmp_path: Path) -> None:
    meta = json.dumps({"sessionId": "s1", "projectHash": "h", "startTime": "t", "kind": "main"})
    good = {"input": 100, "output": 5, "cached": 40, "thoughts": 2, "tool": 3, "total": 110}
    session = tmp_path / "s.jsonl"
    session.write_text(
        "\n".join(
            [
                meta,
                json.dumps({"id": "u1", "type": "user", "content": [{"text": "hi"}]}),
                json.dumps({"id": "g1", "type": "gemini", "content": "a", "tokens": good}),
                json.dumps(
                    {"id": "g2", "type": "gemini", "content": "b", "tokens": {"input": "?"}}
                ),
            ]
        )
        + "\n"
    )
    got = report(session)
    assert [(s["line"], s["reason"]) for s in got["skipped_lines"]] == [
        (4, "gemini message g2 with malformed tokens")
    ]
    # input 100 includes 40 cached; tool use adds 3 to the prompt; thoughts add 2 to the output.
    assert got["totals"] == {"input": 63, "output": 7, "cache_read": 40, "cache_write": 0}
    assert got["last_request"]["input_tokens_total"] == 103


def test_rewind_drops_the_message_and_what_followed(tmp_path: Path) -> None:
    meta = {"sessionId": "s1", "projectHash": "h", "startTime": "t", "kind": "main"}
    tokens = {"input": 50, "output": 5, "cached": 0, "thoughts": 0, "tool": 0, "total": 55}
    kept, dropped = "keep this prompt", "a long prompt the user rewound " * 40
    lines = [
        meta,
        {"id": "u1", "type": "user", "content": [{"text": kept}]},
        {"id": "g1", "type": "gemini", "content": "ok", "tokens": tokens},
        {"id": "u2", "type": "user", "content": [{"text": dropped}]},
        {"$rewindTo": "u2"},
    ]
    session = tmp_path / "s.jsonl"
    session.write_text("".join(json.dumps(line) + "\n" for line in lines))
    got = report(session)
    # The rewound prompt is gone: the last request is the whole context again.
    assert got["context_tokens"] == {
        "value": 55,
        "source": "reported",
        "reported": 55,
        "estimated": 0,
        "estimate_encoding": "o200k_base",
        "tokenizer_factor": 1.0,  # one request: nothing to learn from
    }
    lines[-1] = {"id": "u3", "type": "user", "content": [{"text": dropped}]}
    session.write_text("".join(json.dumps(line) + "\n" for line in lines[:-2] + lines[-1:]))
    assert report(session)["context_tokens"]["value"] == 55 + ENC.count(dropped)


def test_written_in_pieces_with_its_subagent_reads_like_the_whole(tmp_path: Path) -> None:
    chats = tmp_path / "chats"
    shutil.copytree(CHATS, chats)
    target = chats / MAIN.name
    data = MAIN.read_bytes()
    target.write_bytes(b"")
    reader = SessionReader(target)
    rng = random.Random(3)
    position = 0
    while position < len(data):
        step = rng.randint(1, len(data) // 15)
        _append(target, data[position : position + step])
        position += step
        reader.poll()
    live = _reader_report(reader)
    assert live == _reader_report(SessionReader(target))
    assert live["subagents"][0]["api_requests"] == len(responses(records(SUBAGENT)))


def test_the_sample_is_listed_under_gemini_cli_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(SAMPLE_HOME))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["sessions", "--agent", "gemini-cli", "--json"]) == 0
    listed = json.loads(out.getvalue())
    assert [(row["agent"], row["file"]) for row in listed] == [("gemini-cli", str(SAMPLE))]
    got = report(SAMPLE)
    assert got["api_requests"] == len(responses(records(SAMPLE)))
    # No settings.json beside the sample: Gemini CLI's default threshold, half the window.
    assert got["autocompact_at"] == 1_048_576 // 2


def test_the_no_session_screen_names_the_place_searched() -> None:
    assert where("gemini-cli", {}) == "~/.gemini/tmp/*/chats/session-*.jsonl"
    assert where("gemini-cli", {"GEMINI_CLI_HOME": "/srv/me"}) == (
        "/srv/me/.gemini/tmp/*/chats/session-*.jsonl"
    )


LISTING = "a.py\nb.py\nREADME.md"
RESULT = {"functionResponse": {"id": "c1", "name": "ls", "response": {"output": LISTING}}}
ANSWERED = {
    "id": "g1",
    "type": "gemini",
    "content": "",
    "model": "gemini-2.5-pro",
    "tokens": {"input": 900, "output": 20, "cached": 0, "thoughts": 15, "tool": 0, "total": 935},
    "toolCalls": [{"id": "c1", "name": "ls", "args": {}, "status": "success", "result": [RESULT]}],
}


def test_a_legacy_json_document_sends_results_kept_in_tool_calls(tmp_path: Path) -> None:
    """Older Gemini CLI builds wrote one JSON document and kept results only in ``toolCalls``;
    the CLI sends them as a message after the call, so they are on the context, once."""
    document = {
        "sessionId": "legacy-1",
        "projectHash": "abc",
        "startTime": "2025-06-01T10:00:00Z",
        "messages": [{"id": "u1", "type": "user", "content": "list the files"}, ANSWERED],
    }
    legacy = tmp_path / "session-2025-06-01T10-00-legacy1.json"
    legacy.write_text(json.dumps(document, indent=2))
    got = report(legacy)
    assert (got["agent"], got["session_id"], got["api_requests"]) == ("gemini-cli", "legacy-1", 1)
    assert got["totals"]["output"] == 35
    assert got["tools"][0]["calls"] == 1
    expected = {"value": 935 + ENC.count(LISTING), "source": "calibrated"}
    assert {k: got["context_tokens"][k] for k in ("value", "source")} == expected
    # The newer layout also writes the results as a user message: still counted once.
    lines = [
        {"sessionId": "s2", "projectHash": "abc", "startTime": "2025-06-01T10:00:00Z"},
        {"id": "u1", "type": "user", "content": [{"text": "list the files"}]},
        ANSWERED,
        {"id": "u2", "type": "user", "content": [RESULT]},
    ]
    jsonl = tmp_path / "session.jsonl"
    jsonl.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert report(jsonl)["context_tokens"]["value"] == expected["value"]

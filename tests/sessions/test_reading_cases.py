"""Records that are not what they seem: an empty usage is no request; a tool result whose call
the file does not hold is counted under a row that says so."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.sessions.model import SessionState
from ctxtop.engine.sessions.report_json import build_report
from ctxtop.engine.sessions.tool_calls import RESULTS_WITHOUT_CALL

DATA = Path(__file__).parent / "data"
CLAUDE = next((DATA / "real" / "claude-code" / "generated-cli-2.1.330").rglob("b7f51370-*.jsonl"))
CODEX = sorted((DATA / "real" / "codex").rglob("rollout-*.jsonl"))[0]
GEMINI = next((DATA / "generated" / "gemini-cli").rglob("session-*.jsonl"))
SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
OPENAI = SAMPLES / "openai-messages" / "agent-loop.jsonl"
PI = next((SAMPLES / "pi" / "sessions").rglob("*.jsonl"))
QWEN = next((SAMPLES / "qwen-code" / "projects").rglob("chats/*.jsonl"))

Record = dict[str, Any]


def _rows(path: Path) -> list[Record]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _last(rows: list[Record], test: Callable[[Record], bool]) -> int:
    return max(index for index, row in enumerate(rows) if test(row))


def _claude_empty(row: Record) -> Record:
    copy = json.loads(json.dumps(row))
    copy["uuid"] = "00000000-empty-usage"
    copy["parentUuid"] = row["uuid"]  # a line after it, not a rewind to a branch of its own
    copy["message"]["id"] = "msg_empty_usage"
    copy["message"]["usage"] = {}
    return copy


def _claude(rows: list[Record]) -> tuple[int, Record]:
    at = _last(rows, lambda row: row.get("type") == "assistant" and not row.get("isSidechain"))
    return at + 1, _claude_empty(rows[at])


def _claude_history(rows: list[Record]) -> tuple[int, Record]:
    """Before the last compaction: the cold read takes that part in its lean reading."""
    boundary = _last(rows, lambda row: row.get("subtype") == "compact_boundary")
    at = max(i for i in range(boundary) if rows[i].get("type") == "assistant")
    return boundary, _claude_empty(rows[at])


def _codex(rows: list[Record]) -> tuple[int, Record]:
    at = _last(rows, lambda row: row.get("type") == "token_usage_record")
    copy = json.loads(json.dumps(rows[at]))
    copy["payload"]["response_id"] = "resp_empty_usage"
    copy["payload"]["usage"] = {}
    copy["payload"].pop("thread_token_usage", None)
    return at + 1, copy


def _gemini(rows: list[Record]) -> tuple[int, Record]:
    at = _last(rows, lambda row: row.get("type") == "gemini" and "tokens" in row)
    copy = dict(rows[at], id="gemini-empty-usage", tokens={})
    return at + 1, copy


def _openai(rows: list[Record]) -> tuple[int, Record]:
    at = _last(rows, lambda row: row.get("role") == "assistant" and "usage" in row)
    return at + 1, dict(rows[at], id="resp_empty_usage", usage={})


def _pi(rows: list[Record]) -> tuple[int, Record]:
    at = _last(rows, lambda row: row.get("message", {}).get("role") == "assistant")
    copy = json.loads(json.dumps(rows[at]))
    copy["id"], copy["parentId"] = "e0e0e0e0", rows[-1]["id"]  # the next entry, not a branch
    copy["message"]["usage"] = {}
    return len(rows), copy


def _qwen(rows: list[Record]) -> tuple[int, Record]:
    at = _last(rows, lambda row: row.get("type") == "assistant" and "usageMetadata" in row)
    copy = dict(rows[at], uuid="qwen-empty-usage", parentUuid=rows[-1]["uuid"], usageMetadata={})
    return len(rows), copy


CASES = {
    "claude-code": (CLAUDE, _claude),
    "claude-code-history": (CLAUDE, _claude_history),
    "codex": (CODEX, _codex),
    "gemini-cli": (GEMINI, _gemini),
    "openai-messages": (OPENAI, _openai),
    "pi": (PI, _pi),
    "qwen-code": (QWEN, _qwen),
}


def _figures(path: Path) -> tuple[int, Any, Any]:
    reader = SessionReader(path)
    read_all(reader)
    assert reader.adapter is not None
    report = build_report(reader.adapter)
    last = report["last_request"]
    if last is not None:
        last.pop("line")  # one line more in the file with the record
    return report["api_requests"], report["totals"], last


@pytest.mark.parametrize("case", CASES, ids=str)
def test_an_empty_usage_is_no_request(tmp_path: Path, case: str) -> None:
    source, make = CASES[case]
    rows = _rows(source)
    at, empty = make(rows)
    with_empty = tmp_path / "with" / source.name
    without = tmp_path / "without" / source.name
    for path, kept in ((with_empty, [*rows[:at], empty, *rows[at:]]), (without, rows)):
        path.parent.mkdir()
        path.write_text("".join(json.dumps(row) + "\n" for row in kept))
    requests, totals, last = _figures(with_empty)
    assert (requests, totals, last) == _figures(without)
    assert last is not None and last["input_tokens_total"] > 2


def test_a_result_without_its_call_is_counted_under_a_row_that_says_so(tmp_path: Path) -> None:
    rows = _rows(CLAUDE)
    last = rows[_last(rows, lambda row: row.get("type") == "assistant" and "uuid" in row)]
    text = "output of a call made before this file begins"
    orphan = {
        "type": "user",
        "uuid": "00000000-orphan-result",
        "parentUuid": last["uuid"],
        "sessionId": last.get("sessionId"),
        "timestamp": last.get("timestamp"),
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_not_here", "content": text}],
        },
    }
    target = tmp_path / CLAUDE.name
    target.write_text("".join(json.dumps(row) + "\n" for row in [*rows, orphan]))
    reader = SessionReader(target)
    read_all(reader)
    assert reader.adapter is not None
    tools = {tool["name"]: tool for tool in build_report(reader.adapter)["tools"]}
    assert "unknown" not in tools
    assert tools[RESULTS_WITHOUT_CALL]["calls"] == 1
    assert tools[RESULTS_WITHOUT_CALL]["result_tokens"] > 0


def test_a_call_logged_after_its_result_names_the_row() -> None:
    state = SessionState(agent="copilot-cli", path=Path("s.jsonl"))
    state.record_tool_result("call-1", "text", is_error=False)
    assert state.tools["call-1"].name == RESULTS_WITHOUT_CALL
    state.record_tool_call("call-1", "view", line=7)
    assert (state.tools["call-1"].name, state.tools["call-1"].line) == ("view", 7)
    assert state.tools["call-1"].result_text == "text"

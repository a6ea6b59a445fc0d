"""``ctxtop report --json`` on a real Copilot CLI (1.0.102) session against figures worked out here
from the raw events (nothing below calls the Copilot adapter)."""

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

from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.cli.main import main
from ctxtop.engine.config import Thresholds
from ctxtop.engine.live.locate import where
from ctxtop.engine.live.session import build_view
from ctxtop.engine.sessions.sample import build_sample
from ctxtop.engine.tokens.short import short_tokens

SESSION_ID = "244e876e-1a43-4419-88f6-972d1b6e8877"
COPILOT_HOME = Path(__file__).parent / "data" / "generated" / "copilot-cli"
EVENTS = COPILOT_HOME / "session-state" / SESSION_ID / "events.jsonl"
SAMPLE_HOME = Path(__file__).resolve().parents[2] / "sample_sessions" / "copilot-cli"
SAMPLE = SAMPLE_HOME / "session-state" / SESSION_ID / "events.jsonl"


# -- independent expectations ------------------------------------------------------------------


def usage_records(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**row["data"]["usage"], "agentId": row.get("agentId")}
        for row in rows
        if row["type"] == "session.usage_record"
    ]


def by_call(usages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {usage["apiCallId"]: usage for usage in usages}


def totals(usages: list[dict[str, Any]]) -> dict[str, int]:
    """inputTokens is the whole prompt: the uncached part is what the cache did not cover."""
    return {
        "input": sum(
            u["inputTokens"] - u["cacheReadTokens"] - u["cacheWriteTokens"] for u in usages
        ),
        "output": sum(u["outputTokens"] for u in usages),
        "cache_read": sum(u["cacheReadTokens"] for u in usages),
        "cache_write": sum(u["cacheWriteTokens"] for u in usages),
    }


def main_usages(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [u for u in usage_records(rows) if u["initiator"] != "sub-agent"]


def expected_tools(rows: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Tool name → (calls, result tokens) of the main agent, each toolCallId once."""
    names: dict[str, str] = {}
    results: dict[str, str] = {}
    for row in rows:
        if row.get("agentId"):
            continue
        data = row["data"]
        if row["type"] == "assistant.message":
            for request in data.get("toolRequests") or []:
                names.setdefault(request["toolCallId"], request["name"])
        elif row["type"] == "tool.execution_start":
            names.setdefault(data["toolCallId"], data["toolName"])
        elif row["type"] == "tool.execution_complete":
            results[data["toolCallId"]] = data["result"]["content"]
    out: dict[str, tuple[int, int]] = {}
    for call_id, name in names.items():
        calls, tokens = out.get(name, (0, 0))
        out[name] = (calls + 1, tokens + ENC.count(results.get(call_id, "")))
    return out


# -- the report ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return records(EVENTS)


@pytest.fixture(scope="module")
def got() -> dict[str, Any]:
    return report(EVENTS)


def test_identity_window_and_autocompact_point(
    rows: list[dict[str, Any]], got: dict[str, Any]
) -> None:
    start = rows[0]["data"]
    assert got["agent"] == "copilot-cli"
    assert got["agent_version"] == start["copilotVersion"] == "1.0.102"
    assert got["session_id"] == start["sessionId"] == SESSION_ID
    assert got["model"] == main_usages(rows)[-1]["model"]
    assert got["cwd"] == start["context"]["cwd"]
    # The window is the prompt budget the CLI logs with every call (20000 after the resume).
    budget = main_usages(rows)[-1]["maxPromptTokens"]
    assert (got["context_window"], got["context_window_source"]) == (budget, "logged")
    assert budget == 20_000
    # GitHub's docs: compaction starts in the background at about 80% of the window.
    assert got["autocompact_at"] == math.floor(0.8 * budget)
    assert got["skipped_lines"] == []


def test_usage_once_per_call_and_subagent_calls_kept_apart(
    rows: list[dict[str, Any]], got: dict[str, Any]
) -> None:
    everything = usage_records(rows)
    own = main_usages(rows)
    assert len(own) < len(everything)  # the log does hold sub-agent calls
    assert got["api_requests"] == len(by_call(own)) == len(own)
    assert got["totals"] == totals(own)
    assert got["totals"] != totals(everything)
    last = own[-1]
    assert got["last_request"]["input_tokens_total"] == last["inputTokens"]
    assert got["last_request"]["cache_read_tokens"] == last["cacheReadTokens"]
    assert got["last_request"]["cache_write_tokens"] == last["cacheWriteTokens"]
    assert got["last_request"]["output_tokens"] == last["outputTokens"]
    assert got["last_request"]["response_id"] == last["apiCallId"]
    # The session ended on the answer: the context is what the last call reported.
    assert got["context_tokens"]["source"] == "reported"
    assert got["context_tokens"]["value"] == last["inputTokens"] + last["outputTokens"]
    # The CLI's own accounting at shutdown agrees on the main agent's figures.
    shutdown = rows[-1]["data"]["agentMetrics"]["main"]["modelMetrics"]["claude-sonnet-4.5"]
    assert shutdown["requests"]["count"] == got["api_requests"]
    assert shutdown["usage"]["inputTokens"] == sum(u["inputTokens"] for u in own)


def test_the_subagent(rows: list[dict[str, Any]], got: dict[str, Any]) -> None:
    started = next(row for row in rows if row["type"] == "subagent.started")
    theirs = [u for u in usage_records(rows) if u["initiator"] == "sub-agent"]
    assert {u["agentId"] for u in theirs} == {started["agentId"]}
    (child,) = got["subagents"]
    assert child["id"] == started["agentId"]
    assert child["parent_tool_call_id"] == started["data"]["toolCallId"]
    assert child["api_requests"] == len(theirs)
    assert child["last_input_tokens_total"] == theirs[-1]["inputTokens"]
    assert child["totals"] == totals(theirs)


def test_tools_count_each_call_once(rows: list[dict[str, Any]], got: dict[str, Any]) -> None:
    tools = {row["name"]: (row["calls"], row["result_tokens"]) for row in got["tools"]}
    assert tools == expected_tools(rows)
    assert "glob" not in tools  # the sub-agent's call


def test_a_truncation_is_its_own_event_not_a_compaction(
    rows: list[dict[str, Any]], got: dict[str, Any]
) -> None:
    """The CLI dropped the oldest messages of one prompt (``session.truncation``) while it
    compacted once (``session.compaction_complete``): one compaction, one truncation."""
    compactions, truncations = [], []
    for line, row in enumerate(rows, 1):
        data = row["data"]
        if row["type"] == "session.truncation":
            truncations.append(
                {
                    "pre_tokens": data["preTruncationTokensInMessages"],
                    "post_tokens": data["postTruncationTokensInMessages"],
                    "messages_removed": data["messagesRemovedDuringTruncation"],
                    "token_limit": data["tokenLimit"],
                    "line": line,
                    "timestamp": row["timestamp"],
                }
            )
        elif row["type"] == "session.compaction_complete":
            assert data["trigger"] == "threshold"
            pre, post = data["preCompactionTokens"], data["postCompactionTokens"]
            compactions.append(("auto", pre, post, line))
    assert len(compactions) == len(truncations) == 1
    assert [
        (c["trigger"], c["pre_tokens"], c["post_tokens"], c["line"]) for c in got["compactions"]
    ] == compactions
    assert got["truncations"] == truncations
    # The dashboard: the events panel lists both, the compaction count is the CLI's.
    reader = SessionReader(EVENTS)
    read_all(reader)
    assert reader.adapter is not None
    view = build_view(build_sample(reader.adapter), Thresholds())
    assert view.compactions == 1
    [truncation] = truncations
    assert [(e.kind, e.line) for e in view.events if e.kind in ("compaction", "truncation")] == [
        ("truncation", truncation["line"]),
        ("compaction", compactions[0][3]),
    ]
    [event] = [e for e in view.events if e.kind == "truncation"]
    assert event.text == (
        f"truncation: {short_tokens(truncation['pre_tokens'])} ->"
        f" {short_tokens(truncation['post_tokens'])}"
        f" ({truncation['messages_removed']} oldest messages dropped, nothing summarised)"
    )


def test_after_a_compaction_the_context_is_its_figure(
    rows: list[dict[str, Any]], tmp_path: Path
) -> None:
    line = next(i for i, r in enumerate(rows, 1) if r["type"] == "session.compaction_complete")
    cut = tmp_path / "events.jsonl"
    cut.write_bytes(b"".join(EVENTS.read_bytes().splitlines(keepends=True)[:line]))
    context = report(cut)["context_tokens"]
    assert (context["value"], context["source"]) == (
        rows[line - 1]["data"]["postCompactionTokens"],
        "compaction",
    )
    # The next call's report takes over again.
    cut.write_bytes(b"".join(EVENTS.read_bytes().splitlines(keepends=True)[: line + 2]))
    after = report(cut)
    usage = rows[line]["data"]["usage"]
    assert after["context_tokens"]["reported"] == usage["inputTokens"] + usage["outputTokens"]


# -- hand-made variations of the real log -------------------------------------------------------


def test_found_from_its_content_under_any_name(tmp_path: Path, got: dict[str, Any]) -> None:
    renamed = tmp_path / "copilot-log.txt"
    shutil.copyfile(EVENTS, renamed)
    other = report(renamed)
    assert other["agent"] == "copilot-cli"
    assert (other["api_requests"], other["totals"]) == (got["api_requests"], got["totals"])
    # Mid-session, without session.start in sight, still Copilot's.
    tail = tmp_path / "tail.jsonl"
    tail.write_bytes(b"".join(EVENTS.read_bytes().splitlines(keepends=True)[70:]))
    assert report(tail)["agent"] == "copilot-cli"


def test_a_bad_line_is_reported_with_its_number(tmp_path: Path, got: dict[str, Any]) -> None:
    lines = EVENTS.read_bytes().splitlines(keepends=True)
    broken = tmp_path / "events.jsonl"
    broken.write_bytes(
        b"".join([*lines[:6], b'{"type": "session.usage_record", "da\n', *lines[6:]])
    )
    other = report(broken)
    assert [(s["line"], s["reason"].split(":")[0]) for s in other["skipped_lines"]] == [
        (7, "invalid JSON")
    ]
    assert (other["api_requests"], other["totals"]) == (got["api_requests"], got["totals"])


def test_a_usage_record_without_a_prompt_count_is_skipped_by_line(tmp_path: Path) -> None:
    lines = EVENTS.read_text().splitlines(keepends=True)
    record = json.loads(lines[4])
    assert record["type"] == "session.usage_record"
    del record["data"]["usage"]["inputTokens"]
    lines[4] = json.dumps(record) + "\n"
    broken = tmp_path / "events.jsonl"
    broken.write_text("".join(lines))
    got = report(broken)
    assert [(s["line"], s["reason"]) for s in got["skipped_lines"]] == [
        (5, "usage record without inputTokens")
    ]
    assert got["api_requests"] == len(main_usages(records(EVENTS))) - 1


def test_written_in_pieces_reads_like_the_whole(tmp_path: Path) -> None:
    data = EVENTS.read_bytes()
    target = tmp_path / "events.jsonl"
    target.write_bytes(b"")
    reader = SessionReader(target)
    rng = random.Random(5)
    position = 0
    while position < len(data):
        step = rng.randint(1, len(data) // 20)
        _append(target, data[position : position + step])
        position += step
        reader.poll()
    assert _reader_report(reader) == _reader_report(SessionReader(target))


def test_the_sample_is_listed_under_copilot_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("COPILOT_HOME", str(SAMPLE_HOME))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["sessions", "--agent", "copilot-cli", "--json"]) == 0
    listed = json.loads(out.getvalue())
    assert [(row["agent"], row["file"]) for row in listed] == [("copilot-cli", str(SAMPLE))]
    sample_rows = records(SAMPLE)
    got = report(SAMPLE)
    assert got["api_requests"] == len(main_usages(sample_rows))
    assert got["context_window"] == main_usages(sample_rows)[-1]["maxPromptTokens"]


def test_the_no_session_screen_names_the_place_searched() -> None:
    assert where("copilot-cli", {}) == "~/.copilot/session-state/*/events.jsonl"
    assert where("copilot-cli", {"COPILOT_HOME": "/srv/cp"}) == (
        "/srv/cp/session-state/*/events.jsonl"
    )


def test_a_usage_record_counts_before_its_message_is_written(
    rows: list[dict[str, Any]], tmp_path: Path
) -> None:
    """The CLI writes a call's usage record, then its assistant message: a report taken in
    between already shows the call's figure."""
    line = max(
        i
        for i, r in enumerate(rows, 1)
        if r["type"] == "session.usage_record" and not r.get("agentId")
    )
    assert rows[line]["type"] == "assistant.message"
    cut = tmp_path / "events.jsonl"
    cut.write_bytes(b"".join(EVENTS.read_bytes().splitlines(keepends=True)[:line]))
    usage = rows[line - 1]["data"]["usage"]
    context = report(cut)["context_tokens"]
    assert (context["value"], context["source"]) == (
        usage["inputTokens"] + usage["outputTokens"],
        "reported",
    )


def test_the_clis_own_tool_definitions_count_splits_what_the_log_does_not_show() -> None:
    """Requests reported their prompts here: the system section stays inferred from them (they
    predict the requests; the CLI's own count does not). What the messages do not show, the
    context by category splits with the CLI's last ``toolDefinitionsTokens`` (the system
    message is a message of the log)."""
    last = [row["data"] for row in records(SAMPLE) if "toolDefinitionsTokens" in row["data"]][-1]
    reader = SessionReader(SAMPLE)
    read_all(reader)
    assert reader.adapter is not None
    breakdown = build_sample(reader.adapter, breakdown=True).breakdown
    assert breakdown is not None
    assert breakdown.logged_prompt == last["toolDefinitionsTokens"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", str(SAMPLE), "--json"]) == 0
    (system,) = [
        s for s in json.loads(out.getvalue())["analysis"]["sections"] if s["name"] == "system"
    ]
    assert system["provenance"] == "inferred"

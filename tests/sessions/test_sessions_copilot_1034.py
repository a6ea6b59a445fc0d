"""A Copilot CLI 1.0.34 log (no ``session.usage_record``: each answer's ``outputTokens``, the prompt
tokens as sums in ``session.shutdown.modelMetrics``), written by the real 1.0.34 CLI; the figures
expected are worked out here from the raw events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sessions_expect import records

from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.sessions.model import SessionState
from ctxtop.engine.tokens import get_encoding

ENC = get_encoding("o200k_base")
SESSION_ID = "d626a928-f7de-43dd-88fa-13f5e5230d71"
EVENTS = (
    Path(__file__).parent
    / "data"
    / "generated"
    / "copilot-cli-1.0.34"
    / "session-state"
    / SESSION_ID
    / "events.jsonl"
)


def _rows() -> list[dict[str, Any]]:
    return records(EVENTS)


def _state() -> SessionState:
    return read_all(SessionReader(EVENTS))


def _answers(rows: list[dict[str, Any]], *, main: bool) -> list[dict[str, Any]]:
    return [
        row["data"]
        for row in rows
        if row["type"] == "assistant.message" and ("agentId" not in row) == main
    ]


def test_every_answer_is_a_request_with_its_output() -> None:
    rows = _rows()
    state = _state()
    main, sub = _answers(rows, main=True), _answers(rows, main=False)
    assert len(main) > 0 and len(sub) > 0
    assert state.api_requests == len(main)
    assert state.totals.output_tokens == sum(answer["outputTokens"] for answer in main)
    (child,) = state.subagents.values()
    assert child.api_requests == len(sub)
    assert child.totals.output_tokens == sum(answer["outputTokens"] for answer in sub)
    # the CLI's own count of its requests, process by process
    counted = sum(
        metrics["requests"]["count"]
        for row in rows
        if row["type"] == "session.shutdown"
        for metrics in row["data"]["modelMetrics"].values()
    )
    assert state.api_requests + child.api_requests == counted


def test_the_prompt_tokens_come_from_the_sums_at_each_process_end() -> None:
    rows = _rows()
    usages = [
        metrics["usage"]
        for row in rows
        if row["type"] == "session.shutdown"
        for metrics in row["data"]["modelMetrics"].values()
    ]
    totals = _state().totals
    assert totals.input_tokens_total == sum(usage["inputTokens"] for usage in usages)
    assert totals.cache_read_tokens == sum(usage["cacheReadTokens"] for usage in usages)
    assert totals.cache_write_tokens == sum(usage["cacheWriteTokens"] for usage in usages)


def test_no_request_gives_a_context_figure_its_prompt_is_not_logged() -> None:
    state = _state()
    assert state.last_response is None


def test_the_system_message_logged_by_each_process_is_one_system_prompt() -> None:
    rows = _rows()
    logged = [row["data"]["content"] for row in rows if row["type"] == "system.message"]
    assert len(logged) == 2
    system = [message for message in _state().context if message.role == "system"]
    assert [message.blocks[0].text for message in system] == logged[-1:]


def test_after_the_compaction_the_summary_and_what_came_since_are_the_history() -> None:
    rows = _rows()
    done = max(i for i, row in enumerate(rows) if row["type"] == "session.compaction_complete")
    since = [
        row
        for row in rows[done + 1 :]
        if "agentId" not in row
        and row["type"] in ("assistant.message", "tool.execution_complete", "user.message")
    ]
    history = [message for message in _state().context if message.role != "system"]
    assert history[0].kind == "compact_summary"
    assert history[0].blocks[0].text == rows[done]["data"]["summaryContent"]
    assert len(history) == 1 + len(since)


def _report(path: Path) -> dict[str, Any]:
    from sessions_home import report_json

    return report_json(path)


def _system_section(report: dict[str, Any]) -> dict[str, Any]:
    (section,) = [s for s in report["analysis"]["sections"] if s["name"] == "system"]
    return dict(section)


def test_context_is_the_clis_own_count_when_no_request_logged_its_prompt() -> None:
    """No request carries its prompt's size here: the context is the ``currentTokens`` the CLI
    logged last (the log ends with it), shown as logged, never as reported."""
    last = [row["data"] for row in _rows() if "currentTokens" in row.get("data", {})][-1]
    report = _report(EVENTS)
    assert report["context_tokens"]["value"] == last["currentTokens"]
    assert report["context_tokens"]["source"] == "logged"
    assert report["analysis"]["context_source"] == "logged"
    assert all(s["provenance"] != "reported" for s in report["analysis"]["sections"])


def test_a_line_after_the_clis_count_is_added_to_it(tmp_path: Path) -> None:
    """Messages logged after the CLI's count are the tokenizer's estimate on top of it."""
    rows = _rows()
    at = max(i for i, row in enumerate(rows) if "currentTokens" in row.get("data", {}))
    counted = rows[at]["data"]["currentTokens"]
    text = "how many modules does calc have? " * 40
    extra = {
        "type": "user.message",
        "data": {"content": text, "transformedContent": text},
        "id": "extra-user",
        "timestamp": rows[at]["timestamp"],
        "parentId": rows[at]["id"],
    }
    copy = tmp_path / "events.jsonl"
    copy.write_text("".join(json.dumps(row) + "\n" for row in [*rows, extra]))
    report = _report(copy)
    added = report["context_tokens"]["value"] - counted
    assert report["context_tokens"]["source"] == "logged"
    assert 0 < added <= ENC.count(text) + 8  # the text and its message framing


def test_tool_definitions_are_the_clis_own_count() -> None:
    """The system message is in the log (and in the context as a message); the tool definitions
    are not: the system section is the CLI's ``toolDefinitionsTokens``, marked logged."""
    last = [row["data"] for row in _rows() if "toolDefinitionsTokens" in row.get("data", {})][-1]
    section = _system_section(_report(EVENTS))
    assert section["tokens"] == last["toolDefinitionsTokens"]
    assert section["provenance"] == "logged"


def test_a_compaction_forgets_the_clis_count_of_the_context_before_it(tmp_path: Path) -> None:
    """Cut just after the compaction: the CLI's last count (the first process's shutdown) was
    of the context the compaction replaced, so the context is ctxtop's estimate again."""
    rows = _rows()
    done = next(i for i, row in enumerate(rows) if row["type"] == "session.compaction_complete")
    copy = tmp_path / "events.jsonl"
    copy.write_text("".join(json.dumps(row) + "\n" for row in rows[: done + 1]))
    assert _report(copy)["context_tokens"]["source"] == "estimated"


def test_the_sessions_table_marks_the_clis_count_as_logged() -> None:
    """The table marks a figure as the gauge does: ≡ for the agent's logged count, not the
    bare figure of a reported one."""
    from ctxtop.engine.live.sessions_row import session_figures
    from ctxtop.engine.live.sessions_text import cells
    from ctxtop.engine.sessions.sample import build_sample

    reader = SessionReader(EVENTS)
    read_all(reader)
    assert reader.adapter is not None
    sample = build_sample(reader.adapter)
    row = session_figures(sample, None, reader.adapter.state, Path.home())
    assert row.context_source == "logged"
    assert any(text.endswith("≡") for text in cells(row, 0.0).values())

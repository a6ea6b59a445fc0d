"""A Copilot CLI 1.0.34 log (no ``session.usage_record``: each answer's ``outputTokens``, the prompt
tokens as sums in ``session.shutdown.modelMetrics``), written by the real 1.0.34 CLI; the figures
expected are worked out here from the raw events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sessions_expect import records

from engine.agents.session_reader import SessionReader, read_all
from engine.sessions.model import SessionState

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

"""A new Claude Code process after one that edited files sends a new system prompt: its first
request reads nothing of what the process before cached."""

from __future__ import annotations

from pathlib import Path

from analysis_expect import CALC_MAIN, before_compaction, report_json

from ctxtop.engine.agents.session_reader import read_session
from ctxtop.engine.analysis.cache_shapes import new_system_restarts
from ctxtop.engine.sessions.model import SessionState

EDITS = ("Edit", "Write")


def test_only_a_process_after_an_editing_one_changes_the_system_prompt() -> None:
    state = SessionState(agent="claude-code", path=Path("s.jsonl"))
    state.process_starts = [1, 40, 60, 80, 90]
    state.record_tool_call("c1", "Edit", line=10)
    state.record_tool_call("c2", "Read", line=45)
    state.record_tool_call("c3", "Bash", line=50)
    state.record_tool_call("c4", "Write", line=70)
    state.record_tool_call("c5", "Write", line=75)
    # 40 follows the Edit; 60 follows a process that only read; 80 follows the Writes; 90
    # follows a process that ran nothing.
    assert new_system_restarts(state, EDITS) == [40, 80]
    assert new_system_restarts(state, ()) == []


def test_the_first_request_of_a_process_after_edits_reads_nothing(tmp_path: Path) -> None:
    state = read_session(CALC_MAIN)
    restarts = new_system_restarts(state, EDITS)
    compaction = state.compactions[0].line
    # The requests before the compaction are simulated in the log up to it (in the whole log
    # they are history, taken from its figures).
    rows = report_json(before_compaction(CALC_MAIN, tmp_path))["analysis"]["cache"]["requests"]
    # After the compaction (the /compact process) the compaction rule applies as well.
    found = [next((row for row in rows if row["line"] > start), None) for start in restarts]
    firsts = [row for row in found if row is not None and row["line"] < compaction]
    assert len(firsts) == 2
    for row in firsts:
        assert row["read"] == row["logged_read"] == 0
        assert abs(row["write"] - row["logged_write"]) <= 0.05 * row["logged_write"]

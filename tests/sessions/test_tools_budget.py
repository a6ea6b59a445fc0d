"""The tools table of a long session: the newest results counted with the tokenizer, older ones
estimated from their size (marked so), the same whether the session was followed live or read
cold, with the tokenizer's work and the texts kept bounded whatever the history's length.

The sessions are a bundled Claude Code log with a compaction repeated with fresh ids
(tests/session_copies.py); the budget of counted characters is lowered so that a few copies
exceed it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import Watch
from session_copies import COMPACTED, copies

from engine.agents.session_reader import SessionReader, read_all, read_session_data
from engine.cli.main import main
from engine.sessions import model
from engine.sessions.ledger import Ledger, ToolTotal, encoding_for
from engine.sessions.model import SessionState

BUDGET = 12_000  # characters; one copy of the sample holds about 4,000 of results


def _state(count: int) -> SessionState:
    path = COMPACTED[0]
    return read_session_data(path, b"".join(copies(path, count)))


def _table(state: SessionState) -> dict[str, ToolTotal]:
    return {row.name: row for row in Ledger().tools(state, encoding_for(state))}


@pytest.fixture
def budget(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(model, "RESULT_BUDGET", BUDGET)
    return BUDGET


def test_a_short_history_is_counted_exactly() -> None:
    state = _state(6)  # about 24,000 characters of results: under the real budget
    encoding = encoding_for(state)
    table = _table(state)
    assert not any(row.estimated for row in table.values())
    for name, row in table.items():
        texts = [c.result_text or "" for c in state.tools.values() if c.name == name]
        assert row.result_tokens == sum(encoding.count(text) for text in texts)
        assert row.calls == len(texts)


def test_older_results_are_estimated_close_to_their_count(budget: int) -> None:
    exact = _table(_state(1))  # one copy's results, all counted (under the budget)
    state = _state(20)
    table = _table(state)
    assert set(table) == set(exact)
    for name, row in table.items():
        assert row.calls == 20 * exact[name].calls
        if exact[name].result_tokens:
            assert row.estimated  # each tool has results older than the budget
            assert row.result_tokens == pytest.approx(20 * exact[name].result_tokens, rel=0.02)
    # Only the newest results keep their text: about the budget's worth.
    kept = [c.result_text for c in state.tools.values() if c.result_text is not None]
    assert budget <= sum(map(len, kept)) < 2 * budget


def test_the_report_marks_estimated_rows(budget: int, tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"".join(copies(COMPACTED[0], 20)))
    assert main(["report", str(path)]) == 0
    tools = capsys.readouterr().out.split("tools (result tokens")[1]
    assert "≈ result tokens" in tools.splitlines()[1]  # after the figure, as everywhere
    assert main(["report", str(path), "--json"]) == 0
    assert '"result_tokens_estimated": true' in capsys.readouterr().out


def test_followed_live_equals_read_cold(budget: int, tmp_path: Path) -> None:
    lines = copies(COMPACTED[0], 12)
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"")
    reader = SessionReader(path)
    ledger = Ledger()
    step = 37  # appends that split copies, turns and tool calls from their results
    for start in range(0, len(lines), step):
        with path.open("ab") as out:
            out.write(b"".join(lines[start : start + step]))
        reader.poll()
        if reader.state is not None:
            ledger.tools(reader.state, encoding_for(reader.state))
    state = read_all(reader)
    live = ledger.tools(state, encoding_for(state))
    assert live == tuple(Ledger().tools(_state(12), encoding_for(state)))
    assert any(row.estimated for row in live)


def test_tokenizer_work_does_not_grow_with_history(budget: int, watch: Watch) -> None:
    counted = []
    for count in (10, 20, 40):
        state = _state(count)
        with watch.active():
            Ledger().tools(state, encoding_for(state))
        counted.append(sum(map(len, watch.counted)))
        watch.clear()
    assert counted[0] >= budget
    assert counted[2] < counted[0] + 2 * max(len(c.result_text or "") for c in state.tools.values())


def test_a_ledger_tallies_a_state_read_again_anew() -> None:
    """A live session's ledger outlives its reader's state when the reader reads the file again
    from its start (a file replaced; a history that needs the full read): the table is the new
    state's."""
    ledger = Ledger()
    first = _state(3)
    ledger.tools(first, encoding_for(first))
    second = _state(2)
    assert ledger.tools(second, encoding_for(second)) == Ledger().tools(
        second, encoding_for(second)
    )


def test_a_result_replaced_again_and_again_keeps_the_others_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A result replaced several times (a streamed or re-logged result) counts once among the
    newest: an older call's text within the budget is kept and counted, not dropped for the
    replaced texts' characters (it showed 0 tokens, estimated)."""
    monkeypatch.setattr(model, "RESULT_BUDGET", 100)
    state = SessionState(agent="claude-code", path=Path("/s.jsonl"))
    state.record_tool_call("a", "Read")
    state.record_tool_result("a", "alpha beta gamma delta " * 2 + "epsilon zeta")  # 58
    state.record_tool_call("b", "Bash")
    for n in range(4):
        state.record_tool_result("b", f"output {n} of the command, thirty"[:30])
    a = state.tools["a"]
    assert a.result_text is not None  # 58 + 30 characters: within the budget
    encoding = encoding_for(state)
    table = _table(state)
    assert table["Read"].result_tokens == encoding.count(a.result_text)
    assert not table["Read"].estimated
    assert table["Bash"].result_tokens == encoding.count(state.tools["b"].result_text or "")

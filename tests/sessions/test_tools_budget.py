"""The tools table of a long session: the newest results counted with the tokenizer, older ones
estimated from their size (marked so), the same whether the session was followed live or read
cold, with the tokenizer's work and the texts kept bounded whatever the history's length.

The sessions are a bundled Claude Code log with a compaction repeated with fresh ids
(tests/session_copies.py); the budget of counted characters is lowered so that a few copies
exceed it."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from conftest import Watch
from session_copies import COMPACTED, copies

from ctxtop.engine.agents.session_reader import SessionReader, read_all, read_session_data
from ctxtop.engine.cli.main import main
from ctxtop.engine.sessions import model
from ctxtop.engine.sessions.ledger import Ledger, ToolTotal, encoding_for
from ctxtop.engine.sessions.model import SessionState

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


def _calls(count: int, size: int) -> SessionState:
    """``count`` calls, alternately Read and Bash, each answered with ``size`` characters."""
    state = SessionState(agent="claude-code", path=Path("/s.jsonl"))
    for n in range(count):
        state.record_tool_call(f"c{n}", ("Read", "Bash")[n % 2], line=2 * n + 1)
        state.record_tool_result(f"c{n}", f"{n:06d} " * (size // 7), is_error=n == 3)
    return state


def test_a_call_settled_long_ago_is_still_found_by_its_id(budget: int) -> None:
    """A call whose result text was let go of keeps its name, line, size and error flag (a
    context block that refers to it still shows its tool), and its tool's row counts it."""
    state = _calls(200, 700)  # 140,000 characters of results against the 12,000 budget
    old = state.tools["c3"]
    assert (old.name, old.line, old.result_chars, old.is_error) == ("Bash", 7, 700, True)
    assert old.result_text is None
    assert "c3" in state.tools and "c999" not in state.tools
    assert len(state.tools) == 200 and len(list(state.tools)) == 200
    table = _table(state)
    assert table["Read"].calls == table["Bash"].calls == 100
    assert table["Read"].estimated and table["Bash"].estimated


def test_a_late_result_for_a_settled_call_counts_once_under_its_tool(budget: int) -> None:
    state = _calls(200, 700)
    ledger = Ledger()
    encoding = encoding_for(state)
    before = {row.name: row for row in ledger.tools(state, encoding)}
    state.record_tool_result("c2", "a late result, logged again")
    after = {row.name: row for row in ledger.tools(state, encoding)}
    assert state.tools["c2"].name == "Read"  # not an "unknown" call
    assert after["Read"].calls == before["Read"].calls  # the same call, not a new one
    assert "unknown" not in after
    # Its new text is among the newest: counted, and the same as a fresh ledger says.
    assert state.tools["c2"].result_text == "a late result, logged again"
    assert after == {row.name: row for row in Ledger().tools(state, encoding)}


def test_calls_that_never_had_a_result_are_counted_once(budget: int) -> None:
    state = SessionState(agent="claude-code", path=Path("/s.jsonl"))
    ledger = Ledger()
    encoding = encoding_for(state)
    for n in range(300):
        state.record_tool_call(f"c{n}", "Bash", line=n + 1)
        if n % 10:  # every tenth call was interrupted: no result ever came
            state.record_tool_result(f"c{n}", "x" * 500)
        if n % 37 == 0:  # a dashboard looking now and then
            ledger.tools(state, encoding)
    assert _table(state)["Bash"].calls == 300
    assert ledger.tools(state, encoding) == Ledger().tools(state, encoding)
    # What the session keeps of its calls' changes stays with its newest results.
    assert len(state.tool_changes) < 2_000


def test_a_tools_table_followed_call_by_call_equals_a_fresh_one(budget: int) -> None:
    """However often the table is looked at while calls come, it says what a table made at the
    end says (calls settled and taken back in between)."""
    state = SessionState(agent="claude-code", path=Path("/s.jsonl"))
    ledger = Ledger()
    encoding = encoding_for(state)
    for n in range(400):
        state.record_tool_call(f"c{n}", ("Read", "Bash", "Grep")[n % 3], line=n + 1)
        state.record_tool_result(f"c{n}", f"result {n} " * (n % 50))
        if n % 25 == 24:
            state.record_tool_result(f"c{n - 20}", "taken back")  # a late result
        ledger.tools(state, encoding)
    assert ledger.tools(state, encoding) == Ledger().tools(state, encoding)


def test_which_results_are_kept_does_not_depend_on_shared_text_objects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A result replaced and later given again as the very same string object is the newest
    one, as a fresh copy of it would be: the same results are kept and let go of, and the tools
    table is the same (texts repeat as one object when a reader interns or caches them)."""
    monkeypatch.setattr(model, "RESULT_BUDGET", 100)
    generator = random.Random(23)
    pool = [
        letter * size
        for letter, size in zip("stuvwxyz", (30, 5, 19, 6, 40, 12, 25, 3), strict=True)
    ]
    for _ in range(300):
        steps = [(generator.randrange(6), generator.randrange(len(pool))) for _ in range(14)]
        shared, fresh = (SessionState(agent="claude-code", path=Path("/s.jsonl")) for _ in "ab")
        for call, text in steps:
            for state, given in ((shared, pool[text]), (fresh, "".join(list(pool[text])))):
                state.record_tool_call(f"c{call}", ("Read", "Bash", "Grep")[call % 3])
                state.record_tool_result(f"c{call}", given)
        kept = [(c.call_id, c.result_text) for c in shared.tools.values()]
        assert kept == [(c.call_id, c.result_text) for c in fresh.tools.values()], steps
        assert _table(shared) == _table(fresh), steps

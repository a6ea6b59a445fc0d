"""The prompt tree shows the cut before anything is written: after the compaction panel's
preview, the calls and results of the rounds it would summarise are marked, the kept ones not;
after the editing panel's preview, the results it would clear are marked."""

from __future__ import annotations

import shutil
from pathlib import Path

from dashboard_support import frozen_clock, result_labels, synchronous, wait_until

from tui.app import CtxtopApp
from tui.screens.compact import CompactScreen
from tui.screens.edit import EditScreen

ROOT = Path(__file__).resolve().parents[2]
ONE_TURN = ROOT / "tests/data/one_turn/claude-code/b6a9545e-0d9d-4547-a30b-76c3b71a6ebd.jsonl"


@synchronous
async def test_the_tree_marks_the_rounds_a_compaction_would_summarise(tmp_path: Path) -> None:
    session = tmp_path / ONE_TURN.name
    shutil.copyfile(ONE_TURN, session)
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.view is not None and app.view.outline is not None)
        assert not any("◌" in label for label in result_labels(app).values())
        await pilot.press("c")
        screen = app.screen
        assert isinstance(screen, CompactScreen)
        await wait_until(pilot, lambda: screen.outcome is not None)
        outcome = screen.outcome
        assert outcome is not None and outcome["kept_request"]
        summarised = {
            i for row in outcome["round_table"] if not row["kept"] for i in row["call_ids"]
        }
        kept = {i for row in outcome["round_table"] if row["kept"] for i in row["call_ids"]}
        assert len(summarised) == 10 and len(kept) == 2  # 12 calls, one per round; 3 rounds kept
        await pilot.press("escape")  # closed without writing anything
        await pilot.pause()
        assert not isinstance(app.screen, CompactScreen)
        labels = result_labels(app)
        marked = {call for call, label in labels.items() if "◌ would summarise" in label}
        assert marked == summarised
        assert kept <= set(labels) and not marked & kept
        assert sorted(p.name for p in tmp_path.iterdir()) == [session.name]


@synchronous
async def test_the_tree_marks_the_results_an_edit_would_clear(tmp_path: Path) -> None:
    session = tmp_path / ONE_TURN.name
    shutil.copyfile(ONE_TURN, session)
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.view is not None and app.view.outline is not None)
        await pilot.press("e")
        screen = app.screen
        assert isinstance(screen, EditScreen)
        await wait_until(pilot, lambda: screen.outcome is not None)
        outcome = screen.outcome
        assert outcome is not None
        cleared = {change["tool_call_id"] for change in outcome["changed"]}
        assert len(cleared) == 9  # the default keeps the last 3 of the 12 tool uses
        await pilot.press("escape")
        await pilot.pause()
        labels = result_labels(app)
        assert {call for call, label in labels.items() if "⌫ would clear" in label} == cleared
        assert sorted(p.name for p in tmp_path.iterdir()) == [session.name]

"""The prompt tree shows the cut before anything is written: after the compaction panel's
preview, the calls and results of the rounds it would summarise are marked, the kept ones not;
after the editing panel's preview, the results it would clear are marked."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from dashboard_support import frozen_clock, result_labels, screen_lines, synchronous, wait_until
from textual.pilot import Pilot

from ctxtop.engine.analysis.prompt_outline import ROUND
from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.screens.compact_panel import CompactScreen
from ctxtop.tui.screens.edit_panel import EditScreen

ROOT = Path(__file__).resolve().parents[2]
ONE_TURN = ROOT / "tests/data/one_turn/claude-code/b6a9545e-0d9d-4547-a30b-76c3b71a6ebd.jsonl"


def session_copy(tmp_path: Path) -> Path:
    session = tmp_path / ONE_TURN.name
    shutil.copyfile(ONE_TURN, session)
    return session


async def previewed(pilot: Pilot[None], app: CtxtopApp, key: str) -> dict[str, Any]:
    """The first preview of the panel ``key`` opens (``e`` or ``c``), the panel still open, as
    ``--json`` gives it."""
    await pilot.press(key)
    screen = app.screen
    assert isinstance(screen, CompactScreen if key == "c" else EditScreen)
    await wait_until(pilot, lambda: screen.outcome is not None)
    assert screen.outcome is not None
    return screen.outcome.as_json()


@synchronous
async def test_the_tree_marks_the_rounds_a_compaction_would_summarise(tmp_path: Path) -> None:
    session = session_copy(tmp_path)
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.view is not None and app.view.outline is not None)
        assert not any("◌" in label for label in result_labels(app).values())
        outcome = await previewed(pilot, app, "c")
        assert outcome["kept_request"]
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
    session = session_copy(tmp_path)
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.view is not None and app.view.outline is not None)
        outcome = await previewed(pilot, app, "e")
        cleared = {change["tool_call_id"] for change in outcome["changed"]}
        assert len(cleared) == 9  # the default keeps the last 3 of the 12 tool uses
        await pilot.press("escape")
        await pilot.pause()
        labels = result_labels(app)
        assert {call for call, label in labels.items() if "⌫ would clear" in label} == cleared
        assert sorted(p.name for p in tmp_path.iterdir()) == [session.name]


@synchronous
async def test_a_collapsed_node_says_how_many_calls_below_it_are_marked(tmp_path: Path) -> None:
    """Issue 27 item 7: after ``c`` a collapsed turn showed nothing; the marks appeared only
    once it was expanded."""
    app = CtxtopApp(session_copy(tmp_path), clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.view is not None and app.view.outline is not None)
        await previewed(pilot, app, "c")
        await pilot.press("escape")
        await pilot.pause()
        tree = app.prompt_tree.outline_tree
        turn = next(node for node in tree.outline.nodes if node.kind == ROUND)
        tree.built[turn.id].collapse()
        await pilot.pause()
        rows = [row for row in screen_lines(tree) if turn.label[:20] in row]
        assert len(rows) == 1 and "◌ would summarise ×10" in rows[0], rows  # 10 of 12 calls
        tree.built[turn.id].expand()
        await pilot.pause()
        rows = screen_lines(tree)
        opened = [row for row in rows if turn.label[:20] in row]
        assert len(opened) == 1 and "◌" not in opened[0]  # open: the rows below say it
        assert any("◌ would summarise ×1 assistant: tool call" in row for row in rows), rows

"""Snapshots of the main screen at 80x24 and 120x40 in two themes and at 200x60, and of the
edit, compaction, what-if and help screens at 80x24 and 120x40 (fixed data, frozen clock).

Update after an intended change with ``pytest tests/tui --snapshot-update`` and review the SVGs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dashboard_support import frozen_clock, wait_until, write_lines
from textual.pilot import Pilot
from textual.widgets import DataTable, Input

from engine.config import Settings
from engine.live.demo import demo_companions, demo_lines
from tui.app import CtxtopApp


def settled(table: DataTable[Any]) -> bool:
    """Every column is as wide as its widest cell, and no resize is pending (the table measures
    new rows and changed cells when idle: Textual's private flags say whether it still has to)."""
    if table._require_update_dimensions or table._updated_cells or table._new_rows:
        return False
    return all(
        column.content_width >= max((len(str(cell)) for cell in table.get_column(key)), default=0)
        for key, column in table.columns.items()
    )


def loaded_app(
    tmp_path: Path,
    theme: str,
    keys: tuple[str, ...] = (),
    ready: Callable[[CtxtopApp], bool] = lambda app: True,
) -> tuple[CtxtopApp, Any]:
    """The app on the whole sample, and a ``run_before`` that waits until every panel holds
    its figures (and presses ``keys``, then waits until ``ready``: a panel's preview)."""
    session = tmp_path / "session.jsonl"
    write_lines(session, len(demo_lines()))
    # The sub-agent's log and the persisted tool output, beside the session as the demo has them.
    for files in demo_companions(demo_lines()).values():
        for relative, data in files:
            path = session.with_suffix("").joinpath(*relative.parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    app = CtxtopApp(session, settings=Settings(theme=theme), clock=frozen_clock)

    async def loaded(pilot: Pilot[None]) -> None:
        await wait_until(pilot, lambda: app.view is not None and app.view.lines_read > 100)
        # The figures come first, their analysis (sections, tree, forecast) right after.
        await wait_until(pilot, lambda: app.sections.analysis is not None)
        await pilot.press(*keys)
        await wait_until(pilot, lambda: ready(app))
        # What the preview told the app (the prompt tree's marks behind the panel) is handled.
        for field in app.screen.query(Input):  # a blinking cursor would be drawn either way
            field.cursor_blink = False
        await pilot.pause()
        await pilot.pause()
        # Tables size their columns to new rows when idle: wait until all of them have, and until
        # nothing changes any more (a late update, e.g. the events' row, would be drawn before its
        # column is resized).
        shape: list[object] = []

        def still() -> bool:
            now = (
                app.view.lines_read if app.view else None,
                [(table.row_count, [c.content_width for c in table.columns.values()])
                 for table in app.query(DataTable)],
            )  # fmt: skip
            same = bool(shape) and shape[-1] == now
            shape.append(now)
            return same and all(settled(table) for table in app.query(DataTable))

        for _ in range(3):
            await wait_until(pilot, still)
            await pilot.pause(0.05)
        for table in app.query(DataTable):  # a column widened after its last paint: paint again
            table.refresh(layout=True)
        await pilot.pause(0.05)

    return app, loaded


@pytest.mark.parametrize("theme", ["ctxtop-dark", "ctxtop-light"])
@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_main_screen(snap_compare: Any, tmp_path: Path, theme: str, size: tuple[int, int]) -> None:
    app, loaded = loaded_app(tmp_path, theme)
    assert snap_compare(app, terminal_size=size, run_before=loaded)


def test_tree_view_at_80x24(snap_compare: Any, tmp_path: Path) -> None:
    app, loaded = loaded_app(tmp_path, "ctxtop-dark", ("v",))
    assert snap_compare(app, terminal_size=(80, 24), run_before=loaded)


def test_main_screen_at_200x60(snap_compare: Any, tmp_path: Path) -> None:
    app, loaded = loaded_app(tmp_path, "ctxtop-dark")
    assert snap_compare(app, terminal_size=(200, 60), run_before=loaded)


def previewed(app: CtxtopApp) -> bool:
    """The edit or compaction panel shows its first preview."""
    return getattr(app.screen, "outcome", None) is not None


PANELS = {
    "edit": (("e",), previewed),
    # The sample ends 3 rounds after its /compact: keep 1 round, summarise 2.
    "compact": (("c", "backspace", "1"), previewed),
    "what-if": (("b",), lambda app: True),
    "help": (("question_mark",), lambda app: True),
}


@pytest.mark.parametrize("panel", list(PANELS))
@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_panel(snap_compare: Any, tmp_path: Path, panel: str, size: tuple[int, int]) -> None:
    keys, ready = PANELS[panel]
    app, loaded = loaded_app(tmp_path, "ctxtop-dark", keys, ready)
    assert snap_compare(app, terminal_size=size, run_before=loaded)

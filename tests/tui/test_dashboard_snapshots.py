"""Snapshots of the main screen at 80x24 and 120x40 in two themes and at 200x60, and of the
edit, compaction, what-if and help screens at 80x24 and 120x40 (fixed data, frozen clock).

Update after an intended change with ``pytest tests/tui --snapshot-update`` and review the SVGs.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from dashboard_support import LAST_RECORD, frozen_clock, wait_until, write_companions, write_lines
from textual.pilot import Pilot
from textual.widgets import Input

from ctxtop.engine.config import Settings
from ctxtop.engine.forks.compact import compact_session
from ctxtop.engine.live.demo import demo_lines
from ctxtop.engine.live.session import LiveSession
from ctxtop.engine.live.view import LiveView
from ctxtop.tui.app import CtxtopApp


@contextmanager
def sample_session() -> Iterator[Path]:
    """The whole demo sample, with its sub-agent's log and the persisted tool output beside it
    as the demo has them, in a new directory whose path has one shape however the tests run.

    The compaction summary names the session's path, so the panel's summary size depends on
    it; pytest's tmp_path does not have one shape (pytest-xdist adds ``popen-gwN/``, the user
    name and run number vary): 509 tokens under ``-n 2`` against 504 alone. Twelve digits are
    four tokens whichever digits they are."""
    while True:
        folder = Path(tempfile.gettempdir()) / f"ctxtop-snapshot-{random.randrange(10**12):012d}"
        try:
            folder.mkdir()
            break
        except FileExistsError:
            continue
    try:
        session = folder / "session.jsonl"
        write_lines(session, len(demo_lines()))
        write_companions(session)
        # Written when its last record says (the frozen clock is 42 s later): "agent wrote 42 s
        # ago".
        written = datetime.fromisoformat(LAST_RECORD).timestamp()
        for path in (session, *session.with_suffix("").rglob("*")):
            os.utime(path, (written, written))
        yield session
    finally:
        shutil.rmtree(folder)


@pytest.fixture
def sample() -> Iterator[Path]:
    with sample_session() as session:
        yield session


def final_view(session: Path) -> LiveView:
    """What the dashboard shows once it has read everything: the same file read apart."""
    live = LiveSession(session)
    while live.poll():
        pass
    live.view()  # analysed once: the system prompt and tools are the sections' figure
    view = live.view()
    assert view is not None
    return view


def loaded_app(
    session: Path,
    theme: str,
    keys: tuple[str, ...] = (),
    ready: Callable[[CtxtopApp], bool] = lambda app: True,
) -> tuple[CtxtopApp, Any]:
    """The app on the whole sample, and a ``run_before`` that waits until every panel shows the
    whole file with its analysis (and presses ``keys``, then waits until ``ready``: a panel's
    preview). Tables size their columns when their rows are set (tui/components/fit.py), so
    nothing is left to settle after that."""
    final = final_view(session)
    app = CtxtopApp(session, settings=Settings(theme=theme), clock=frozen_clock)

    def complete() -> bool:
        view = app.view
        return (
            view == final
            and view.analysis is not None
            and app.sections.analysis is view.analysis
            and app._waiting is None
        )

    async def loaded(pilot: Pilot[None]) -> None:
        await wait_until(pilot, complete)
        await pilot.press(*keys)
        await wait_until(pilot, lambda: ready(app))
        for field in app.screen.query(Input):  # a blinking cursor would be drawn either way
            field.cursor_blink = False
        # What the preview told the app (the prompt tree's marks behind the panel) is handled.
        await pilot.pause()

    return app, loaded


@pytest.mark.parametrize("theme", ["ctxtop-dark", "ctxtop-light"])
@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_main_screen(snap_compare: Any, sample: Path, theme: str, size: tuple[int, int]) -> None:
    app, loaded = loaded_app(sample, theme)
    assert snap_compare(app, terminal_size=size, run_before=loaded)


def test_tree_view_at_80x24(snap_compare: Any, sample: Path) -> None:
    app, loaded = loaded_app(sample, "ctxtop-dark", ("v",))
    assert snap_compare(app, terminal_size=(80, 24), run_before=loaded)


def test_main_screen_at_200x60(snap_compare: Any, sample: Path) -> None:
    app, loaded = loaded_app(sample, "ctxtop-dark")
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
def test_panel(snap_compare: Any, sample: Path, panel: str, size: tuple[int, int]) -> None:
    keys, ready = PANELS[panel]
    app, loaded = loaded_app(sample, "ctxtop-dark", keys, ready)
    assert snap_compare(app, terminal_size=size, run_before=loaded)


def test_the_compaction_summary_has_one_size_however_the_tests_run() -> None:
    """The compaction panel's snapshot shows the summary's size: the same in every run."""

    def summary_tokens(session: Path) -> int:
        figures = compact_session(session, keep_rounds=1, dry_run=True).preview.details.settings()
        return int(figures["summary_tokens"])

    with sample_session() as first, sample_session() as second:
        assert first != second
        assert summary_tokens(first) == summary_tokens(second)

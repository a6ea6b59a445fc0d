"""Snapshots of the sessions screen at 80x24 and 160x50: the sample sessions of every agent,
a frozen clock and fixed modification times (some sessions working or waiting, some idle).

Update after an intended change with ``pytest tests/tui --snapshot-update`` and review the SVGs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from dashboard_support import FROZEN, frozen_clock, wait_until
from sessions_home import sample_home
from textual.pilot import Pilot

from ctxtop.engine.config import Settings
from ctxtop.engine.live.locate import newest_sessions
from ctxtop.tui.app import CtxtopApp

# Written 20 s before the frozen clock: the rest were written 10 minutes before it (idle).
RECENT = ("codex", ".copilot")


def sessions_app(home: Path, monkeypatch: pytest.MonkeyPatch) -> CtxtopApp:
    now = FROZEN.timestamp()
    sample_home(home, monkeypatch, written=now - 600)
    for path in home.rglob("*"):
        if any(part in RECENT for part in path.parts) or ".codex" in path.parts:
            os.utime(path, (now - 20, now - 20))
    return CtxtopApp(
        newest_sessions()[0],
        settings=Settings(),
        follow_newest=True,
        start_on_sessions=True,
        clock=frozen_clock,
        use_watchfiles=False,
    )


async def loaded(pilot: Pilot[None]) -> None:
    app = pilot.app
    # Every row read, the shown ones in full (a big table shows quick rows first).
    await wait_until(pilot, lambda: app.screen.id == "sessions" and app.screen.settled)
    await pilot.pause(0.1)
    app.screen.refresh(layout=True)
    await pilot.pause(0.05)


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
def test_sessions_screen(
    snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    app = sessions_app(tmp_path / "home", monkeypatch)
    assert snap_compare(app, terminal_size=size, run_before=loaded)


def test_sessions_screen_unfolded_at_160x50(
    snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session's sub-agents unfolded under it (space on the selected row)."""
    app = sessions_app(tmp_path / "home", monkeypatch)

    async def unfolded(pilot: Pilot[None]) -> None:
        await loaded(pilot)
        await pilot.press("space")
        await pilot.pause(0.05)

    assert snap_compare(app, terminal_size=(160, 50), run_before=unfolded)

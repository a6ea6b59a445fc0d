"""The cache clock on the dashboard: the Context panel counts down with the app's clock (frozen
here, moved by the test), says when the cache went cold, fits at 80x24, and the edit panel
says whether acting now or after expiry is cheaper."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

from dashboard_support import FROZEN, synchronous, wait_until, write_lines
from textual.containers import Vertical
from textual.widgets import Input

from ctxtop.engine.live.demo import demo_lines
from ctxtop.tui.app import CtxtopApp


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def subtitle(app: CtxtopApp) -> str:
    return str(app.gauge.border_subtitle or "")


@synchronous
async def test_the_context_panel_counts_down_and_goes_cold(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    write_lines(session, len(demo_lines()))  # 1-hour cache writes; last request 14:04:41.330
    clock = Clock(FROZEN)  # 42 s later
    app = CtxtopApp(session, clock=clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: subtitle(app).startswith("cache warm"))
        shown = subtitle(app)
        assert shown.startswith("cache warm 59:19 · next $0.007 now, $0.136 after expiry")
        assert shown.endswith("*")  # ctxtop's estimate from the log
        # The whole line fits in the panel's bottom border at 80 columns.
        assert len(shown) + 4 <= app.gauge.size.width

        clock.now = FROZEN + timedelta(seconds=75)
        await wait_until(pilot, lambda: subtitle(app).startswith("cache warm 58:04 "))

        clock.now = FROZEN + timedelta(hours=1)
        await wait_until(pilot, lambda: subtitle(app).startswith("cache cold"))
        assert subtitle(app) == "cache cold since 15:04 · next $0.136 (22.7k written again)*"


@synchronous
async def test_the_edit_panel_says_acting_now_is_cheaper_while_warm(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    write_lines(session, len(demo_lines()))
    clock = Clock(FROZEN)
    app = CtxtopApp(session, clock=clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.view is not None and app.view.analysis is not None)
        await pilot.press("e")
        field = app.screen.query_one("#edit-keep-tool-uses", Input)
        field.value = "0"  # clears the one old result

        def preview() -> str:
            """The advice on the panel's bottom border."""
            return str(app.screen.query_one(Vertical).border_subtitle or "")

        await wait_until(pilot, lambda: "cache warm" in preview())
        assert re.search(
            r"^cache warm 59:19: cheaper now \(\$0\.0\d\d\) than after expiry"
            r" \(\$0\.1\d\d\)\*",
            preview(),
        )
        await pilot.press("escape")

        clock.now = FROZEN + timedelta(hours=2)
        await pilot.press("e")
        app.screen.query_one("#edit-keep-tool-uses", Input).value = "0"
        await wait_until(pilot, lambda: "cache cold" in preview())
        assert re.search(
            r"^cache cold: the prefix is rewritten anyway \(\$0\.1\d\d\), acting is free\*",
            preview(),
        )

"""``enter`` on a compaction in the Events panel opens what it kept and dropped: the
inspector's result for that compaction, the figures the Events row shows."""

from __future__ import annotations

from pathlib import Path

import pytest
from dashboard_support import COMPACTION_LINE, frozen_clock, synchronous, wait_until, write_lines
from textual.pilot import Pilot
from textual.widgets import Static
from textual.widgets._toast import Toast

from ctxtop.engine.agents.session_reader import read_session
from ctxtop.engine.editing import action_log
from ctxtop.engine.forks.restore import HEADER
from ctxtop.engine.live.demo import demo_lines
from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.components.events import EventLog
from ctxtop.tui.screens.compaction_inspector import CompactionScreen


@synchronous
async def test_enter_on_the_compaction_row_shows_what_it_dropped(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    write_lines(session, len(demo_lines()))
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.view is not None and app.view.analysis is not None)
        events = app.query_one(EventLog)
        await wait_until(pilot, lambda: events.row_count == 1)
        row = events.get_row_at(0)
        assert str(row[0]) == str(COMPACTION_LINE)
        await pilot.press("tab")  # from the tools table, the panel the dashboard starts on
        assert app.focused is events
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CompactionScreen))
        body = app.screen.query_one("#body", Static)
        await wait_until(pilot, lambda: "inspecting" not in str(body.render()))
        shown = str(body.render())
        assert shown.startswith(f"compaction 1 · line {COMPACTION_LINE} · manual · 23,893 -> *")
        # The Events row's "after", written short: the same figure.
        after = shown.split(" -> *", 1)[1].split(" tokens", 1)[0]
        assert f"-> *{int(after.replace(',', '')) / 1000:.1f}k" in row[1].plain
        # The user's first request, which the summary does not carry, is flagged.
        assert "U1   DROPPED" in shown and "← forgotten instruction" in shown
        assert "forgotten instructions: U1" in shown
        assert f"ctxtop restore {session} --compaction 1" in shown
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, CompactionScreen))


async def open_the_compaction(pilot: Pilot[None], app: CtxtopApp) -> Static:
    await wait_until(pilot, lambda: app.view is not None and app.view.analysis is not None)
    await wait_until(pilot, lambda: app.query_one(EventLog).row_count == 1)
    await pilot.press("tab", "enter")
    await wait_until(pilot, lambda: isinstance(app.screen, CompactionScreen))
    body = app.screen.query_one("#body", Static)
    await wait_until(pilot, lambda: "inspecting" not in str(body.render()))
    return body


@synchronous
@pytest.mark.parametrize("key", ["r", "w"])
async def test_the_view_writes_the_restore_forks(tmp_path: Path, key: str) -> None:
    """r: the history up to the compaction; w: the summary and the forgotten request."""
    session = tmp_path / "session.jsonl"
    write_lines(session, len(demo_lines()))
    original = session.read_bytes()
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await open_the_compaction(pilot, app)
        await pilot.press(key)
        await wait_until(pilot, lambda: not isinstance(app.screen, CompactionScreen))
        [action] = action_log.read_actions()
        fork = Path(action["fork"])
        await wait_until(pilot, lambda: f"Fork written: {fork.name}" in toasts(app))
        assert f"claude --resume {action['session_id']}" in toasts(app)
    assert action["kind"] == "restore" and action["compaction"] == 1
    restored = read_session(fork)
    said = [" ".join(b.content() for b in m.blocks) for m in restored.context]
    if key == "r":
        assert action["restore"] == "before" and not restored.compactions
        assert not any(text.startswith(HEADER) for text in said)
    else:
        assert action["restore"] == "summary" and action["with"] == ["U1"]
        [added] = [text for text in said if text.startswith(HEADER)]
        assert "STEP_BIGREAD STEP_AGENT" in added
    assert session.read_bytes() == original


def toasts(app: CtxtopApp) -> str:
    return "\n".join(str(toast.render()) for toast in app.screen.query(Toast))


@synchronous
async def test_enter_on_a_skipped_line_opens_nothing(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    write_lines(session, 20)
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.view is not None)
        with session.open("ab") as out:
            out.write(b"not json\n")
        events = app.query_one(EventLog)
        await wait_until(pilot, lambda: events.row_count == 1)
        events.focus()
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert not isinstance(app.screen, CompactionScreen)

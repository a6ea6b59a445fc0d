"""Copilot CLI's ``session.truncation`` on the dashboard: its own row in the events panel, not
counted as a compaction (the real 1.0.102 session truncated once and compacted once)."""

from __future__ import annotations

import shutil
from pathlib import Path

from dashboard_support import frozen_clock, synchronous, wait_until

from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.components.events import EventLog

EVENTS = (
    Path(__file__).parents[1]
    / "sessions/data/generated/copilot-cli/session-state"
    / "244e876e-1a43-4419-88f6-972d1b6e8877/events.jsonl"
)


@synchronous
async def test_the_events_panel_shows_the_truncation_apart_from_the_compaction(
    tmp_path: Path,
) -> None:
    session = tmp_path / "events.jsonl"
    shutil.copyfile(EVENTS, session)
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.view is not None)
        assert app.view is not None
        assert app.view.compactions == 1
        events = app.query_one(EventLog)
        await wait_until(pilot, lambda: events.row_count == 2)
        rows = [str(events.get_row_at(index)[1]) for index in range(events.row_count)]
        assert rows[0].startswith("truncation: 22.8k -> 11.7k (19 oldest messages dropped")
        assert rows[1] == "auto compaction: 21.2k -> 11.8k"

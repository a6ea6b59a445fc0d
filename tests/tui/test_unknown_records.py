"""Records of types ctxtop does not know reach the dashboard as a one-line notice."""

from __future__ import annotations

import json
from pathlib import Path

from dashboard_support import frozen_clock, synchronous, wait_until, write_lines
from textual.widgets import Static

from ctxtop.tui.app import CtxtopApp

# Types no Claude Code release wrote: a format change ctxtop has not caught up with.
NEW_TYPES = [("context-ledger", 2), ("prompt-budget", 1)]


def _notice(app: CtxtopApp) -> Static:
    return app.query_one("#unknown-records", Static)


@synchronous
async def test_the_dashboard_says_how_many_records_it_did_not_understand(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    write_lines(session, 20)
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.view is not None)
        assert not _notice(app).display  # every record of the demo is of a known type
        with session.open("a", encoding="utf-8") as out:
            for kind, count in NEW_TYPES:
                for _ in range(count):
                    out.write(json.dumps({"type": kind, "sessionId": "s", "tokens": 900}) + "\n")
        total = sum(count for _, count in NEW_TYPES)
        await wait_until(pilot, lambda: _notice(app).display)
        text = str(_notice(app).render())
        assert text.startswith(f"{total} records of types ctxtop does not know:")
        for kind, count in NEW_TYPES:
            assert f"{kind} ({count})" in text
        assert text.endswith("figures may be incomplete")
        assert "\n" not in text

"""End to end in a real terminal: ``ctxtop sessions --watch`` in tmux redraws its table in place
as a new session starts and grows."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sessions_home import NEW_SESSION, report_json, sample_home
from test_dashboard_tmux import capture, ctxtop_in_tmux, wait_for_screen

from engine.agents.discovery import discover
from engine.live.demo import demo_lines

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
# The size from the terminal itself: a LINES/COLUMNS the test process had (tmux's server keeps
# the environment it started with) would otherwise win over the pane's.
TERMINAL_SIZE = {"LINES": "", "COLUMNS": ""}


def test_watch_redraws_the_table_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = sample_home(tmp_path / "home", monkeypatch)
    count = len(discover())
    variables = {"HOME": str(home), **TERMINAL_SIZE}
    with ctxtop_in_tmux("sessions", "--watch", env=variables, height=60) as name:
        # The whole table fits in 60 rows: the agent with the least filled session is on it.
        shown, screen = wait_for_screen(name, "gemini-cli", limit=60)  # a safety limit
        assert shown, screen
        assert (
            f"{count} active" in screen
            and "codex" in screen
            and "gemini-cli" in screen
            and "copilot-cli" in screen
        )
        new = home / NEW_SESSION
        new.parent.mkdir(parents=True)
        lines = demo_lines()
        new.write_bytes(b"".join(lines[:40]))
        shown, screen = wait_for_screen(name, f"{count + 1} active", limit=60)
        assert shown, screen
        with new.open("ab") as out:
            out.write(b"".join(lines[40:70]))
        fill = f"{report_json(new)['fill_percent']:5.1f}%"
        shown, screen = wait_for_screen(name, fill, limit=60)
        assert shown, screen
        # Redrawn in place: one title and one header on the screen, not a scrolling log.
        screen = capture(name)
        assert screen.count("ctxtop sessions:") == 1
        assert [line for line in screen.splitlines() if line.startswith("agent ")] != []
        assert len([line for line in screen.splitlines() if line.startswith("agent ")]) == 1


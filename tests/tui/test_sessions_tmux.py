"""End to end in a real terminal: ``ctxtop sessions --watch`` in tmux redraws its table in place
as a new session starts and grows."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest
from sessions_home import NEW_SESSION, report_json, sample_home
from test_dashboard_tmux import capture, ctxtop_in_tmux, wait_for_screen

from ctxtop.engine.agents.discovery import discover
from ctxtop.engine.live.demo import demo_lines

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


def test_watch_keeps_its_title_when_the_table_is_taller_than_the_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The samples with their sub-agents unfolded take more rows than 30: the title stays on the
    first row and the rows that do not fit are counted, not scrolled away."""
    home = sample_home(tmp_path / "home", monkeypatch)
    count = len(discover())
    with ctxtop_in_tmux(
        "sessions", "--watch", env={"HOME": str(home), **TERMINAL_SIZE}, height=30
    ) as name:
        # Title, header, 26 rows, the count: 29 lines and the newline after them, no scroll.
        more = re.compile(r"… [1-9]\d* more rows \(a taller terminal shows them\)")
        deadline = time.monotonic() + 60  # a safety limit
        lines = capture(name).splitlines()
        while not (len(lines) > 28 and more.fullmatch(lines[28])) and time.monotonic() < deadline:
            time.sleep(0.05)
            lines = capture(name).splitlines()
        assert len(lines) > 28 and more.fullmatch(lines[28]), lines
        assert lines[0].startswith(f"ctxtop sessions: {count} active")
        assert lines[1].startswith("agent ")

"""End to end in a real terminal: tmux runs ``ctxtop FILE``; appended lines show within 1 s."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from dashboard_support import write_lines

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def capture(name: str) -> str:
    return subprocess.run(
        ["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True
    ).stdout


def wait_for_screen(name: str, wanted: str, limit: float) -> tuple[bool, str]:
    deadline = time.monotonic() + limit
    screen = ""
    while time.monotonic() < deadline:
        screen = capture(name)
        if wanted in screen:
            return True, screen
        time.sleep(0.02)
    return False, screen


@contextlib.contextmanager
def ctxtop_in_tmux(
    *args: str, env: dict[str, str] | None = None, height: int = 30
) -> Iterator[str]:
    """``ctxtop ARGS`` in a fresh 100 columns by ``height`` rows tmux session (its name), killed
    afterwards (``env``: more variables for it)."""
    name = f"ctxtop-e2e-{uuid.uuid4().hex[:8]}"
    ours = {key: value for key, value in os.environ.items() if key.startswith("CTXTOP_")}
    ours.update(env or {})
    env = " ".join(f"{key}={shlex.quote(value)}" for key, value in ours.items())
    script = Path(sys.executable).parent / "ctxtop"  # the installed command, as a user runs it
    program = shlex.quote(str(script)) if script.exists() else f"{sys.executable} -m tui"
    words = " ".join(shlex.quote(arg) for arg in args)
    command = f"env {env} TERM=xterm-256color {program} {words}"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, "-x", "100", "-y", str(height), command],
        check=True,
    )
    try:
        yield name
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


@pytest.fixture
def tmux_session(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    session_file = tmp_path / "session.jsonl"
    write_lines(session_file, 60)  # six requests, before the /compact
    with ctxtop_in_tmux(str(session_file)) as name:
        yield name, session_file


def test_appended_compaction_shows_the_new_fill_within_one_second(
    tmux_session: tuple[str, Path],
) -> None:
    name, session_file = tmux_session
    shown, screen = wait_for_screen(name, "│ 11.9 %", limit=30)  # start-up: a safety limit
    assert shown, screen
    # The /compact: 11.9 % -> 11.1 %, the agent's 2.8k of messages after it and the 19.5k of
    # system prompt and tools the next request sends too (was 1.4 %, the messages alone).
    write_lines(session_file, 10, start=60)
    shown, screen = wait_for_screen(name, "│ 11.1 %", limit=1.0)
    assert shown, f"the new fill did not show within one second:\n{screen}"
    # The events table and the sections may paint a frame after the gauge: within the second too.
    for text in ("manual compaction", "(after compaction)"):
        shown, screen = wait_for_screen(name, text, limit=1.0)
        assert shown, f"{text!r} did not show:\n{screen}"


def test_demo_opens_the_dashboard_on_the_bundled_session() -> None:
    with ctxtop_in_tmux("--demo") as name:
        shown, screen = wait_for_screen(name, "claude-code · claude-sonnet-4-5", limit=30)
        assert shown, screen
        assert "Context" in screen and "Tools" in screen and "q Quit" in screen

"""``ctxtop`` without a file: follows the newest session, switches to newer ones unless pinned."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dashboard_support import synchronous, wait_until, write_lines
from textual.binding import Binding

from ctxtop.engine.live.locate import choose, searched
from ctxtop.tui.app import CtxtopApp


@pytest.fixture
def claude_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    projects = tmp_path / "claude" / "projects" / "-home-dev-project"
    projects.mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    return projects


def new_session(folder: Path, name: str, age: float = 0) -> Path:
    path = folder / f"{name}.jsonl"
    write_lines(path, 40)
    stamp = path.stat().st_mtime - age
    os.utime(path, (stamp, stamp))
    return path


def follow_app() -> CtxtopApp:
    target = choose(None, "claude-code")
    return CtxtopApp(
        target.path,
        follow_newest=target.follow_newest,
        agent="claude-code",
        places=searched("claude-code"),
        newer_check=0.05,
    )


@synchronous
async def test_switches_to_a_newer_session_until_pinned(claude_home: Path) -> None:
    first = new_session(claude_home, "first", age=60)
    app = follow_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.view is not None)
        assert app.path == first
        second = new_session(claude_home, "second")
        await wait_until(pilot, lambda: app.path == second and app.view is not None)
        await pilot.press("f")
        assert app.pinned
        new_session(claude_home, "third")
        for _ in range(10):  # several discovery intervals go by
            await pilot.pause(0.05)
        assert app.path == second
        await pilot.press("f")
        await wait_until(pilot, lambda: app.path is not None and app.path.name == "third.jsonl")


@synchronous
async def test_starts_on_the_no_session_screen_and_opens_the_first_session(
    claude_home: Path,
) -> None:
    app = follow_app()
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.query_one("#no-session").display
        where = str(claude_home.parent.parent / "projects/*/*.jsonl")
        assert where in str(app.query_one("#no-session-text").render())
        path = new_session(claude_home, "fresh")
        await wait_until(pilot, lambda: app.view is not None)
        assert app.path == path
        assert app.query_one("#dashboard").display and not app.query_one("#no-session").display


@synchronous
async def test_every_action_is_in_the_command_palette(tmp_path: Path) -> None:
    app = CtxtopApp(None)
    async with app.run_test(size=(80, 24)):
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert {"Pause / resume", "Pin / follow newest", "Sort tools", "Next theme", "Help"} <= (
            titles
        )
        # Every key but quit (the palette has its own) is an action by name too (a key's
        # first binding: a later one says why the key does nothing when the first may not act).
        first: dict[str, str] = {}
        for binding in app.BINDINGS:
            if isinstance(binding, Binding):
                first.setdefault(binding.key, binding.action)
        keyed = set(first.values())
        assert {app.ACTIONS[action][0] for action in keyed - {"quit"}} <= titles
        assert {"What-if window", "Next layout profile", "Search the prompt tree"} <= titles

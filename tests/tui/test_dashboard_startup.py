"""Opening the dashboard does each piece of work once: the file is read once by one reader, one
sample and one analysis make the first full screen, the tokenizer is loaded once, and nothing
the first screen does not need (the proxy, the panels, the sessions table) is imported on the
way. Operation counts only, never times."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from argparse import Namespace
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from dashboard_support import synchronous, wait_until, write_companions
from sessions_home import NEW_SESSION, sample_home
from textual.message import Message

from ctxtop.engine.agents import session_reader
from ctxtop.engine.agents.discovery import discover
from ctxtop.engine.config import Settings
from ctxtop.engine.live import locate, sessions_table
from ctxtop.engine.live import session as live_session
from ctxtop.engine.live.demo import demo_lines
from ctxtop.engine.sessions.tail import Batch, LineTailer
from ctxtop.engine.tokens import encoding
from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.launch import build_app
from ctxtop.tui.messages import ViewApplied
from ctxtop.tui.screens.sessions import SessionsScreen

ROOT = Path(__file__).resolve().parents[2]


def count_calls(
    monkeypatch: pytest.MonkeyPatch, counts: Counter[str], owner: Any, name: str
) -> None:
    real = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        counts[name] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)


@pytest.fixture
def startup_counts(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Readers made, bytes read per file, samples, analyses and tokenizer loads from now on."""
    counts: Counter[str] = Counter()
    count_calls(monkeypatch, counts, live_session, "build_sample")
    count_calls(monkeypatch, counts, live_session, "analyze_session")
    count_calls(monkeypatch, counts, encoding, "_build")
    monkeypatch.setattr(encoding, "_loaded", {})  # a first run: no tokenizer loaded yet
    real_init, real_read = session_reader.SessionReader.__init__, LineTailer.read

    def init(self: session_reader.SessionReader, *args: Any, **kwargs: Any) -> None:
        counts["SessionReader"] += 1
        real_init(self, *args, **kwargs)
        counts[f"readers of {self.path.name}"] += 1

    def read(self: LineTailer, limit: int | None = None) -> Batch:
        batch = real_read(self, limit)
        counts[f"bytes of {self.path.name}"] += batch.bytes_read
        return batch

    monkeypatch.setattr(session_reader.SessionReader, "__init__", init)
    monkeypatch.setattr(LineTailer, "read", read)
    return counts


@synchronous
async def test_the_first_full_screen_reads_samples_and_analyses_once(
    tmp_path: Path, startup_counts: Counter[str]
) -> None:
    session = tmp_path / "session.jsonl"
    session.write_bytes(b"".join(demo_lines()))
    write_companions(session)  # a sub-agent's log and a persisted tool output beside it
    companions = sorted(path for path in session.with_suffix("").rglob("*") if path.is_file())
    assert companions
    applied: list[ViewApplied] = []

    def hook(message: Message) -> None:
        if isinstance(message, ViewApplied):
            applied.append(message)

    app = CtxtopApp(session)
    async with app.run_test(size=(120, 40), message_hook=hook) as pilot:
        await wait_until(pilot, lambda: any(m.view.analysis is not None for m in applied))
        await pilot.pause(0.3)  # nothing more comes while the file stays as it is
        assert app.view is not None and app.view.analysis is not None
        assert app.view.subagents  # the companions were read too
    assert startup_counts["SessionReader"] == 1
    assert startup_counts[f"bytes of {session.name}"] == session.stat().st_size
    for path in companions:
        if path.suffix == ".jsonl":
            assert startup_counts[f"bytes of {path.name}"] == path.stat().st_size
    assert startup_counts["build_sample"] == 1
    assert startup_counts["analyze_session"] == 1
    assert startup_counts["_build"] == 1  # the tokenizer
    # At most the figures first (gauge, tools, events), then the same sample with its analysis
    # (one screen when the analysis is ready by the time the figures are taken); the analysis
    # only decides the compactions' "after" (their system prompt and tools).
    assert 1 <= len(applied) <= 2 and applied[-1].view.analysis is not None
    last = applied[-1].view.sample
    assert all(
        dataclasses.replace(m.view.sample, compactions=last.compactions) == last for m in applied
    )


@synchronous
async def test_the_sessions_table_and_the_dashboard_read_a_session_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, startup_counts: Counter[str]
) -> None:
    """``ctxtop`` with several sessions active starts on the sessions table, the newest session
    on the dashboard under it: that one is read once for both, and a session opened from the
    table is shown without reading it again."""
    home = sample_home(tmp_path / "home", monkeypatch)
    newest = home / NEW_SESSION
    newest.parent.mkdir(parents=True)
    lines = demo_lines()
    newest.write_bytes(b"".join(lines[:60]))
    sessions = [found.path for found in discover()]
    assert sessions[0] == newest and len(sessions) > 2
    app = CtxtopApp(newest, settings=Settings(), follow_newest=True, start_on_sessions=True)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, lambda: app.view is not None and app.view.analysis is not None)
        await wait_until(
            pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen.loaded
        )
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        await wait_until(pilot, lambda: {row.key for row in screen.rows} >= set(map(str, sessions)))
        assert row_of(screen, newest) == app.view.gauge.tokens  # the same on both screens
        for path in sessions:
            assert startup_counts[f"readers of {path.name}"] == 1, path
        assert startup_counts[f"bytes of {newest.name}"] == newest.stat().st_size

        # The agent writes on: whichever of the two reads the new lines, both show them.
        before_tokens = app.view.gauge.tokens
        with newest.open("ab") as out:
            out.write(b"".join(lines[60:]))
        await wait_until(
            pilot, lambda: app.view is not None and app.view.gauge.tokens != before_tokens
        )
        await wait_until(pilot, lambda: row_of(screen, newest) == app.view.gauge.tokens)
        assert startup_counts[f"bytes of {newest.name}"] == newest.stat().st_size

        # Opening another session from the table: the table's reading of it is shown.
        other = next(path for path in sessions[1:] if path.suffix == ".jsonl")
        before = startup_counts.copy()
        screen.grid.move_cursor(row=[row.key for row in screen.rows].index(str(other)))
        app.open_session(other)
        await wait_until(pilot, lambda: app.view is not None and app.view.file == str(other))
        assert startup_counts[f"readers of {other.name}"] == 1
        assert startup_counts[f"bytes of {other.name}"] == before[f"bytes of {other.name}"]


@synchronous
async def test_following_the_newest_session_lists_the_sessions_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ctxtop`` with no file: the sessions are listed once and the newest looked into once on
    the way to the first screen (the launch's look serves the dashboard's first newer-session
    check); a newer file that is no session is still said to be passed over, once."""
    home = sample_home(tmp_path / "home", monkeypatch, written=time.time() - 7200)  # not active
    newest = home / NEW_SESSION
    newest.parent.mkdir(parents=True)
    newest.write_bytes(b"".join(demo_lines()))
    junk = newest.with_name("2bf70000-0000-4000-8000-000000000002.jsonl")
    junk.write_text('{"not": "a session"}\n' * 50)
    hour_ago, later = time.time() - 3600, time.time() - 3500  # the junk alone is active
    os.utime(newest, (hour_ago, hour_ago))
    os.utime(junk, (later, later))
    counts: Counter[str] = Counter()
    count_calls(monkeypatch, counts, locate, "discover")
    count_calls(monkeypatch, counts, sessions_table, "discover")
    count_calls(monkeypatch, counts, locate, "is_session")
    app = build_app(Namespace(demo=False, session=None, agent=None))
    assert isinstance(app, CtxtopApp) and app.path == newest and not app.start_on_sessions
    app.newer_check = 3600  # the periodic check stays out of the counts
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.view is not None and app.view.analysis is not None)
        await pilot.pause(0.3)
        said = [n.message for n in app._notifications if n.title == "Skipped newer files"]
    assert counts["discover"] == 1
    assert counts["is_session"] == 2  # the junk file, then the newest session
    assert len(said) == 1 and junk.name in said[0]


def row_of(screen: SessionsScreen, path: Path) -> int | None:
    """The context tokens of ``path``'s row."""
    return next((row.context_tokens for row in screen.rows if row.key == str(path)), None)


def test_opening_the_dashboard_imports_only_what_the_first_screen_needs() -> None:
    """The proxy (aiohttp), the editing and compaction panels and the sessions screen are
    imported when used: their imports cost about a quarter of a second of CPU before the
    first screen."""
    probe = (
        "import sys, tui.cli, engine.cli.main, tui.launch, tui.app\n"
        "print(' '.join(sorted(sys.modules)))"
    )
    loaded = set(
        subprocess.run(
            [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
    )
    later = {
        "aiohttp",
        "ctxtop.engine.proxy.server",
        "ctxtop.engine.live.apply_plan",
        "ctxtop.engine.live.sessions_table",
        "ctxtop.tui.screens.edit_panel",
        "ctxtop.tui.screens.compact_panel",
        "ctxtop.tui.screens.sessions",
        "ctxtop.tui.screens.fork_panel",
    }
    assert loaded & later == set()
    assert "textual.app" in loaded and "ctxtop.engine.live.session" in loaded

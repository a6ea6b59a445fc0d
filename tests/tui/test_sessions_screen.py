"""The sessions screen ("top"): the sample sessions of every agent in one live table, sorted,
filtered, opened, and kept current as a session file grows and a new one starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dashboard_support import synchronous, wait_until
from sessions_home import NEW_SESSION, cost_of, report_json, sample_home
from textual.pilot import Pilot
from textual.widgets import Static
from textual.widgets._footer import FooterKey

from ctxtop.engine.agents.discovery import discover
from ctxtop.engine.config import Settings
from ctxtop.engine.live.demo import demo_lines
from ctxtop.engine.live.locate import newest_sessions
from ctxtop.engine.live.sessions_row import SessionRow
from ctxtop.engine.live.sessions_text import sort_rows
from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.screens.help import HelpScreen
from ctxtop.tui.screens.sessions import SessionsScreen


def shown_keys(screen: SessionsScreen) -> list[str]:
    """The row keys in the table's order, as drawn."""
    grid = screen.grid
    return [str(grid.coordinate_to_cell_key((index, 0)).row_key.value) for index in
            range(grid.row_count)]  # fmt: skip


def shown_text(screen: SessionsScreen, key: str) -> str:
    """One drawn row's cells as text."""
    return " ".join(str(cell) for cell in screen.grid.get_row(key))


def row_of(screen: SessionsScreen, path: Path) -> SessionRow | None:
    return next((row for row in screen.rows if row.key == str(path)), None)


def agrees(row: SessionRow | None, report: dict[str, Any]) -> bool:
    """The row's figures are the report's."""
    if row is None:
        return False
    forecast = report["analysis"]["forecast"]
    return (
        row.context_tokens == report["context_tokens"]["value"]
        and row.context_source == report["context_tokens"]["source"]
        and row.fill_percent == report["fill_percent"]
        and row.requests == report["api_requests"]
        and row.growth == forecast["growth_per_request"]
        and row.requests_left == forecast["requests_left"]
        and row.cost == cost_of(report)
    )


async def on_sessions(pilot: Pilot[None]) -> SessionsScreen:
    app = pilot.app
    await wait_until(pilot, lambda: app.screen.id == "sessions" and app.screen.loaded)
    screen = app.screen
    assert isinstance(screen, SessionsScreen)
    return screen


@synchronous
async def test_table_lists_sorts_filters_opens_and_follows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = sample_home(tmp_path / "home", monkeypatch)
    sessions = discover()
    assert len(sessions) > 1
    app = CtxtopApp(newest_sessions()[0], settings=Settings(), follow_newest=True,
                    start_on_sessions=True)  # fmt: skip
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await on_sessions(pilot)
        # Every session of every agent is a row, sub-agents folded under their parent.
        assert {row.key for row in screen.rows} == {str(found.path) for found in sessions}
        assert {row.agent for row in screen.rows} >= {"claude-code", "codex", "gemini-cli",
                                                      "copilot-cli"}  # fmt: skip
        assert shown_keys(screen) == [row.key for row in sort_rows(screen.rows, "fill")]
        fills = [row.fill_percent or 0 for row in sort_rows(screen.rows, "fill")]
        assert fills == sorted(fills, reverse=True)  # fill, largest first, by default
        codex = next(row for row in screen.rows if row.agent == "codex")
        assert "codex" in shown_text(screen, codex.key)
        assert f"{codex.fill_percent:.1f}%" in shown_text(screen, codex.key)

        # Sorting by the next column (context tokens), then reversed.
        await pilot.press("s")
        tokens = [next(r for r in screen.rows if r.key == key).context_tokens
                  for key in shown_keys(screen)]  # fmt: skip
        assert tokens == sorted(tokens, reverse=True)
        await pilot.press("r")
        tokens = [next(r for r in screen.rows if r.key == key).context_tokens
                  for key in shown_keys(screen)]  # fmt: skip
        assert tokens == sorted(tokens)

        # Typing filters; esc clears the filter.
        await pilot.press(*"gemini")
        assert [key for key in shown_keys(screen)] == [
            row.key for row in screen.rows if row.agent == "gemini-cli"
        ]
        await pilot.press("escape")
        assert len(shown_keys(screen)) == len(sessions)

        # Space unfolds a session's sub-agents under it.
        parent = next(row for row in screen.rows if row.children)
        screen.grid.move_cursor(row=shown_keys(screen).index(parent.key))
        await pilot.press("space")
        keys = shown_keys(screen)
        start = keys.index(parent.key) + 1
        assert keys[start : start + len(parent.children)] == [c.key for c in parent.children]

        # A new session file becomes a row, with the figures `ctxtop report` gives.
        new = home / NEW_SESSION
        new.parent.mkdir(parents=True)
        lines = demo_lines()
        new.write_bytes(b"".join(lines[:40]))
        report = report_json(new)
        await wait_until(pilot, lambda: agrees(row_of(screen, new), report))
        assert new.name.split(".")[0] in report["file"]

        # An append moves the row's figures to the report's new values.
        with new.open("ab") as out:
            out.write(b"".join(lines[40:70]))
        grown = report_json(new)
        assert grown["context_tokens"]["value"] != report["context_tokens"]["value"]
        await wait_until(pilot, lambda: agrees(row_of(screen, new), grown))
        text = shown_text(screen, str(new))
        assert f"{grown['fill_percent']:.1f}%" in text

        # Enter opens the selected session on the dashboard; `a` comes back to the table.
        screen.grid.move_cursor(row=shown_keys(screen).index(str(new)))
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen.id != "sessions")
        assert app.path == new
        await wait_until(pilot, lambda: app.view is not None and app.view.file == str(new))
        await pilot.press("a")
        await wait_until(pilot, lambda: app.screen.id == "sessions")
        assert str(new) in shown_keys(screen)


@synchronous
async def test_one_active_session_opens_the_dashboard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sessions screen comes first only when more than one session was active lately."""
    from argparse import Namespace

    from ctxtop.tui.launch import build_app

    home = tmp_path / "home"
    session = home / NEW_SESSION
    session.parent.mkdir(parents=True)
    session.write_bytes(b"".join(demo_lines()[:40]))
    monkeypatch.setenv("HOME", str(home))
    args = Namespace(demo=False, session=None, agent=None)
    app = build_app(args)
    assert isinstance(app, CtxtopApp) and not app.start_on_sessions
    sample_home(home, monkeypatch)  # now several sessions, all written just now
    app = build_app(args)
    assert isinstance(app, CtxtopApp) and app.start_on_sessions
    async with app.run_test(size=(80, 24)) as pilot:
        await on_sessions(pilot)


@synchronous
async def test_help_on_the_table_gives_the_tables_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 27 item 8: ``?`` on the table listed the dashboard's keys (what-if, edit, …)."""
    sample_home(tmp_path / "home", monkeypatch)
    app = CtxtopApp(newest_sessions()[0], settings=Settings(), follow_newest=True,
                    start_on_sessions=True)  # fmt: skip
    async with app.run_test(size=(80, 24)) as pilot:
        await on_sessions(pilot)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        shown = str(app.screen.query_one(Static).render())
        for words in ("Sessions table keys", "Sort by the next column", "Reverse the order",
                      "Fold or unfold", "Filter the rows", "working: the model owes"):  # fmt: skip
            assert words in shown, words
        assert "What-if" not in shown and "Compact" not in shown
        # The table's footer stays the table's while its help is open.
        footer = {key.key_display or key.key for key in app.screen_stack[-2].query(FooterKey)}
        assert "v" not in footer and "e" not in footer
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.id == "sessions"


@synchronous
async def test_a_120_column_terminal_shows_every_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README: below 120 columns the table leaves out model, growth and cost; at exactly
    120 it left them out too (the scrollbar's cells were taken off first)."""
    sample_home(tmp_path / "home", monkeypatch)
    for width, shown in ((120, True), (119, False)):
        app = CtxtopApp(newest_sessions()[0], settings=Settings(), follow_newest=True,
                        start_on_sessions=True)  # fmt: skip
        async with app.run_test(size=(width, 40)) as pilot:
            screen = await on_sessions(pilot)
            titles = " ".join(str(column.label) for column in screen.grid.columns.values())
            for title in ("model", "growth", "cost"):
                assert (title in titles) is shown, (width, titles)
            assert "project" in titles and "state" in titles


@synchronous
async def test_the_header_and_the_table_give_one_last_write_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log copied (or touched) now whose records are days old: the table said "10s ago"
    (the file's time), the header "agent wrote at 2026-11-22 14:04" (the records' time)."""
    import os
    from datetime import UTC, datetime

    from ctxtop.engine.live.sessions_table import SessionsTable
    from ctxtop.engine.live.sessions_text import cells

    home = sample_home(tmp_path / "home", monkeypatch)
    new = home / NEW_SESSION
    new.parent.mkdir(parents=True)
    new.write_bytes(b"".join(demo_lines()))
    written = os.stat(new).st_mtime
    table = SessionsTable(active_minutes=30, clock=lambda: written + 20)
    table.start()
    row = next(row for row in table.rows() if row.key == str(new))
    assert row.last_write == written
    assert cells(row, written + 20, 0)["last"] == "20s ago"
    clock = datetime.fromtimestamp(written + 20, UTC)
    app = CtxtopApp(new, settings=Settings(), clock=lambda: clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.view is not None)
        header = str(app.header.render())
    assert "agent wrote 20 s ago" in header

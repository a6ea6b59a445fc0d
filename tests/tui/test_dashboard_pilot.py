"""The dashboard driven through Textual's pilot on a real session file that grows."""

from __future__ import annotations

import argparse
from pathlib import Path

from dashboard_support import COMPACTION_LINE, frozen_clock, synchronous, wait_until, write_lines
from textual.message import Message

from ctxtop.engine.config import Settings
from ctxtop.engine.live.demo import demo_lines
from ctxtop.engine.live.session import LiveSession
from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.components.events import EventLog
from ctxtop.tui.components.tools_panel import ToolsTable
from ctxtop.tui.launch import build_app
from ctxtop.tui.messages import LoadProgress, SessionUpdated, ViewApplied


def make_app(path: Path) -> CtxtopApp:
    return CtxtopApp(path, clock=frozen_clock)


@synchronous
async def test_appended_lines_change_the_fill_and_add_the_compaction(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    write_lines(session, COMPACTION_LINE - 5)
    posted: list[Message] = []
    app = make_app(session)
    async with app.run_test(size=(120, 40), message_hook=posted.append) as pilot:
        await wait_until(pilot, lambda: app.view is not None)
        assert app.view is not None
        before = app.view.gauge.percent
        assert app.view.compactions == 0
        assert any(isinstance(m, SessionUpdated) for m in posted)
        applied = [m for m in posted if isinstance(m, ViewApplied)]
        assert applied and applied[-1].view.gauge.percent == before

        write_lines(session, len(demo_lines()), start=COMPACTION_LINE - 5)
        await wait_until(pilot, lambda: app.view is not None and app.view.compactions == 1)
        assert app.view.gauge.percent != before
        # The same figure ``ctxtop report`` gives for the file.
        expected = LiveSession(session)
        expected.poll()
        expected.view()  # analysed once: the system prompt and tools are the sections' figure
        final = expected.view()
        assert final is not None
        await wait_until(pilot, lambda: app.view == final)
        assert app.view.gauge.percent == final.sample.fill_percent
        events = app.query_one(EventLog)
        assert events.row_count == 1
        assert "manual compaction" in str(events.get_row_at(0)[1])


@synchronous
async def test_skipped_lines_reach_the_event_log_as_plain_text(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    write_lines(session, 20)
    app = make_app(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.view is not None)
        with session.open("ab") as out:
            out.write(b"[bold red]not json\n")
        await wait_until(pilot, lambda: app.query_one(EventLog).row_count == 1)
        text = app.query_one(EventLog).get_row_at(0)[1]
        assert "skipped line 21" in text.plain and "invalid JSON" in text.plain


@synchronous
async def test_pause_holds_updates_until_resumed(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    write_lines(session, 30)
    app = make_app(session)
    async with app.run_test(size=(80, 24)) as pilot:
        # The figures, then their analysis: wait for both, so that nothing is on its way.
        await wait_until(pilot, lambda: app.view is not None and app.view.analysis is not None)
        shown = app.view
        await pilot.press("space")
        write_lines(session, len(demo_lines()), start=30)
        await wait_until(pilot, lambda: app._held is not None)
        assert app.view is shown
        await pilot.press("space")
        assert app.view is not shown and app.view is not None
        assert app.view.api_requests > shown.api_requests  # type: ignore[union-attr]


@synchronous
async def test_keys_sort_tools_and_cycle_themes(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    write_lines(session, len(demo_lines()))
    app = make_app(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.query_one(ToolsTable).row_count == 2)
        tools = app.query_one(ToolsTable)
        assert [str(tools.get_row_at(i)[0]) for i in range(2)] == ["Bash", "Agent"]
        await pilot.press("s", "s")  # tokens -> calls -> name
        assert tools.sort_key == "name"
        assert [str(tools.get_row_at(i)[0]) for i in range(2)] == ["Agent", "Bash"]
        assert app.theme == "ctxtop-dark"
        await pilot.press("t")
        assert app.theme == "ctxtop-light"
        await pilot.press("t", "t")
        assert app.theme == "ctxtop-dark"
        await pilot.press("question_mark")
        assert type(app.screen).__name__ == "HelpScreen"
        await pilot.press("escape")
        assert type(app.screen).__name__ == "Screen"


@synchronous
async def test_no_session_says_where_it_looked_and_suggests_the_demo() -> None:
    app = CtxtopApp(None, follow_newest=True, places=["claude-code: ~/.claude/projects"])
    async with app.run_test(size=(80, 24)):
        text = str(app.query_one("#no-session-text").render())
        assert "~/.claude/projects" in text
        assert "ctxtop --demo" in text
        assert not app.query_one("#dashboard").display


@synchronous
async def test_load_progress_shows_until_the_first_figures(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    app = make_app(session)  # not there yet: the feed waits for it
    async with app.run_test(size=(80, 24)) as pilot:
        status = app.query_one("#status")
        await wait_until(pilot, lambda: str(session) in str(status.render()))  # "no such file"
        app.post_message(LoadProgress(25, 100))
        await wait_until(pilot, lambda: "25 % of 100 bytes" in str(status.render()))
        assert status.has_class("shown")
        app.post_message(LoadProgress(100, 100))
        await wait_until(pilot, lambda: "counting tokens" in str(status.render()))
        write_lines(session, 40)
        await wait_until(pilot, lambda: app.view is not None)
        assert not status.has_class("shown")


@synchronous
async def test_demo_replays_the_sample_and_starts_over(tmp_path: Path) -> None:
    app = build_app(argparse.Namespace(demo=True, session=None, agent=None), tmp_path)
    assert isinstance(app, CtxtopApp) and app.demo is not None
    app.demo.interval, app.demo.pause = 0.002, 1.5  # the whole sample in about a second
    seen: list[int] = []
    async with app.run_test(size=(80, 24)) as pilot:

        def watch() -> bool:
            if app.view is not None and (not seen or seen[-1] != app.view.api_requests):
                seen.append(app.view.api_requests)
            return app.demo is not None and app.demo.rounds >= 1 and len(seen) > 2

        await wait_until(pilot, watch)
        await wait_until(pilot, lambda: watch() and seen[-1] < max(seen))
    assert max(seen) == 8  # every request of the sample was on screen before it started over


BAD_THEMES = {
    "spread.yaml": "luminosity_spread: abc",
    "dark.yaml": "dark: maybe",
    "alpha.yaml": "text_alpha: 7",
    "variable.yaml": "variables: {footer-key-foreground: blurple}",
    "style.yaml": "variables: {block-cursor-text-style: shiny}",
    "ansi.yaml": "ansi: true",
}


@synchronous
async def test_bad_theme_files_are_skipped_with_a_notice_and_the_default_shown(
    isolated_dirs: Path,
) -> None:
    """Each of these loaded and crashed the app when selected, or at start when the settings
    named it: now each is one line naming its file, and the settings' choice falls back."""
    folder = isolated_dirs / "config" / "themes"
    folder.mkdir(parents=True)
    for name, line in BAD_THEMES.items():
        (folder / name).write_text(f"name: bad\nprimary: '#B58900'\n{line}\n")
    app = CtxtopApp(None, settings=Settings(theme="bad"))
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.theme == "ctxtop-dark" and "bad" not in app.theme_names
        for _ in app.theme_names:
            await pilot.press("t")  # every theme in the cycle applies
        [notice] = [n for n in app._notifications if n.title == "Theme files"]
        lines = notice.message.splitlines()
        assert len(lines) == 5 + 1 + 1  # five files, "and 1 more", the fallback
        assert all(line.startswith(str(folder)) for line in lines[:5])
        assert lines[5] == "and 1 more theme file skipped"
        assert lines[6] == "the settings' theme 'bad' is not loaded: ctxtop-dark instead"


@synchronous
async def test_a_users_theme_file_joins_the_cycle(tmp_path: Path, isolated_dirs: Path) -> None:
    folder = isolated_dirs / "config" / "themes"
    folder.mkdir(parents=True)
    (folder / "solar.yaml").write_text("name: solar\nprimary: '#B58900'\ndark: true\n")
    app = CtxtopApp(None)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.theme_names[-1] == "solar"
        await pilot.press("t", "t", "t")
        assert app.theme == "solar"
        assert app.current_theme.primary == "#B58900"

"""Log text that tries to drive the terminal or the UI: Rich/Textual markup (``[bold red]``,
``[link=…]``, ``[@click=app.quit]``), ANSI and OSC escape sequences (clear screen, hyperlinks,
OSC 52 clipboard writes), BEL, CR, BS, NUL, bidi overrides and very long lines, in every field a
session log gives ctxtop (tool names and results, user text, file paths, model, session id, cwd,
summaries, titles, sub-agent descriptions, unreadable lines).

Every panel that shows log-derived text is driven through the pilot; what reaches the terminal
(the screen's composited lines, cell by cell, and their styles) must hold the markup as literal
text, no escape or control character, no link and no click action. The CLI's text output
(``report``, ``sessions``, ``statusline``) is checked byte by byte as a terminal would get it.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_run import SUBPROCESS_MAIN
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Input, Select
from textual.widgets._toast import Toast

from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.messages import NewerSession
from ctxtop.tui.screens.compact_panel import CompactScreen
from ctxtop.tui.screens.compaction_inspector import CompactionScreen
from ctxtop.tui.screens.edit_panel import EditScreen

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/tui"))
from dashboard_support import wait_until  # noqa: E402
from test_dashboard_tmux import ctxtop_in_tmux, wait_for_screen  # noqa: E402

MARKUP = "[bold red]X[/]"
LINK = "[link=https://evil.example]click[/link]"
CLICK = "[@click=app.quit]x[/]"
ESCAPES = (
    "\x1b[2J"  # clear the screen
    "\x1b]8;;https://evil.example\x1b\\"  # OSC 8 hyperlink
    "\x1b]52;c;ZXZpbCBjbGlwYm9hcmQ=\x07"  # OSC 52: write the clipboard
    "\x1b]2;PWNED-TITLE\x07"  # OSC 2: set the window title
    "\x07\r\x08\x00\u202e\x9b"  # BEL, CR, BS, NUL, right-to-left override, C1 CSI
)
HOSTILE = f"{MARKUP} {LINK} {CLICK} {ESCAPES}evil"
LONG_LINE = "A" * 20_000

# What must never reach the terminal from log text: C0 controls (the screen has no newlines
# either: a line is one row), DEL, C1 controls, bidi embeddings, overrides and isolates.
FORBIDDEN = {chr(c) for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))} | {
    *map(chr, range(0x202A, 0x202F)),
    *map(chr, range(0x2066, 0x206A)),
}

SESSION_ID = f"[u]{HOSTILE}"
CWD = f"/home/dev/{MARKUP}{ESCAPES}proj"
MODEL = f"{MARKUP}{ESCAPES}model"
TOOL = f"{MARKUP}{ESCAPES}tool"
FILE_PATH = f"/home/dev/{MARKUP}{ESCAPES}.py"
SUMMARY = f"{MARKUP} summary {ESCAPES}"


# -- hostile sessions ----------------------------------------------------------------------------


def claude_records() -> list[dict[str, Any]]:
    usage = {"input_tokens": 10, "cache_read_input_tokens": 4000, "output_tokens": 20}
    common = {"sessionId": SESSION_ID, "cwd": CWD, "isSidechain": False, "version": "2.1.330"}
    stamp = iter(f"2026-11-22T14:{n:02}:00.000Z" for n in range(20))

    def record(kind: str, uid: str, parent: str | None, **extra: Any) -> dict[str, Any]:
        head = {"type": kind, "uuid": uid, "parentUuid": parent, "timestamp": next(stamp)}
        return head | common | extra

    def assistant(uid: str, parent: str, content: list[dict[str, Any]]) -> dict[str, Any]:
        message = {"role": "assistant", "model": MODEL, "content": content, "usage": usage}
        return record("assistant", uid, parent, message=message)

    def user(uid: str, parent: str | None, content: Any, **extra: Any) -> dict[str, Any]:
        return record("user", uid, parent, message={"role": "user", "content": content}, **extra)

    call = {"type": "tool_use", "id": "toolu_1", "name": TOOL, "input": {"file_path": FILE_PATH}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": f"{HOSTILE}\n{LONG_LINE}"}
    call2 = {"type": "tool_use", "id": "toolu_2", "name": TOOL, "input": {"command": HOSTILE}}
    result2 = {"type": "tool_result", "tool_use_id": "toolu_2", "content": HOSTILE * 50}
    return [
        {"type": "summary", "summary": SUMMARY, "leafUuid": "none"},
        user("u1", None, f"{HOSTILE} please read {FILE_PATH}"),
        assistant("a1", "u1", [{"type": "text", "text": HOSTILE}, call]),
        user("r1", "a1", [result]),
        assistant("a2", "r1", [{"type": "text", "text": f"done {HOSTILE}"}]),
        user("u2", "a2", f"second request {HOSTILE}"),
        assistant("a3", "u2", [call2]),
        user("r2", "a3", [result2]),
        assistant("a4", "r2", [{"type": "text", "text": "done again"}]),
        user("u3", "a4", f"third request {HOSTILE}"),
        assistant("a5", "u3", [{"type": "text", "text": f"ok {HOSTILE}"}]),
        # The agent compacted: the event log names the trigger the log gives.
        record(
            "system",
            "b1",
            None,
            subtype="compact_boundary",
            content="Conversation compacted",
            compactMetadata={"trigger": HOSTILE, "preTokens": 4000, "postTokens": 900},
        ),
        user("s1", "b1", f"This session is being continued. {SUMMARY}", isCompactSummary=True),
        user("u4", "s1", f"fourth request {HOSTILE}"),
        assistant("a6", "u4", [{**call, "id": "toolu_3"}]),
        user("r3", "a6", [{**result, "tool_use_id": "toolu_3"}]),
        assistant("a7", "r3", [{"type": "text", "text": f"ok {HOSTILE}"}]),
    ]


def write_claude_session(root: Path) -> Path:
    """A Claude Code transcript with a sub-agent and an unreadable line, under ``root``."""
    project = root / "projects" / "-home-dev-proj"
    project.mkdir(parents=True)
    path = project / "0b7e3c1a-1111-4222-8333-944455556666.jsonl"
    lines = [json.dumps(r) for r in claude_records()]
    lines.insert(3, f'{{"type": "user", "broken": "{HOSTILE}')  # not JSON: a skipped line
    path.write_text("\n".join(lines) + "\n", "utf-8")
    agents = project / path.stem / "subagents"
    agents.mkdir(parents=True)
    (agents / "agent-a1.meta.json").write_text(json.dumps({"description": f"{MARKUP}{ESCAPES}"}))
    sub = {
        "type": "user",
        "uuid": "s1",
        "parentUuid": None,
        "isSidechain": True,
        "agentId": "a1",
        "sessionId": SESSION_ID,
        "timestamp": "2026-11-22T14:01:30.000Z",
        "message": {"role": "user", "content": f"SUBAGENT {HOSTILE}"},
    }
    (agents / "agent-a1.jsonl").write_text(json.dumps(sub) + "\n", "utf-8")
    return path


def write_generic_session(root: Path) -> Path:
    """An OpenAI-format chat log (the generic reader) with the same hostile fields."""
    usage = {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920}
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": TOOL, "arguments": json.dumps({"path": FILE_PATH})},
    }
    messages = [
        {"role": "system", "content": f"system {HOSTILE}"},
        {"role": "user", "content": f"{HOSTILE} fix it"},
        {
            "role": "assistant",
            "model": MODEL,
            "content": None,
            "tool_calls": [call],
            "usage": usage,
        },
        {"role": "tool", "tool_call_id": "call_1", "content": f"{HOSTILE}\n{LONG_LINE}"},
        {"role": "assistant", "model": MODEL, "content": f"done {HOSTILE}", "usage": usage},
        {"role": "user", "content": f"again {HOSTILE}"},
        {"role": "assistant", "model": MODEL, "content": "ok", "usage": usage},
    ]
    path = root / "chat.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in messages) + "\n", "utf-8")
    return path


@pytest.fixture(params=["claude-code", "openai-messages"])
def session(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    if request.param == "claude-code":
        return write_claude_session(tmp_path / "claude")
    return write_generic_session(tmp_path)


# -- what reaches the terminal -------------------------------------------------------------------


def screen_cells(app: App[Any]) -> tuple[str, list[str]]:
    """The composited screen as text (one line per row), and what its styles would make the
    terminal do beyond colour: links and click actions."""
    rows: list[str] = []
    actions: list[str] = []
    for strip in app.screen._compositor.render_strips():
        row = []
        for segment in strip:
            if segment.control:
                actions.append(f"control codes {segment.control!r}")
                continue
            row.append(segment.text)
            style = segment.style
            if style is not None:
                if style.link:
                    actions.append(f"link {style.link!r} on {segment.text!r}")
                # Textual's own scroll bars carry @mouse actions; markup would add @click.
                meta = style.meta or {}
                if "@click" in meta or "quit" in repr(meta):
                    actions.append(f"action {meta!r} on {segment.text!r}")
        rows.append("".join(row))
    return "\n".join(rows), actions


def assert_inert(app: App[Any], where: str, *literal: str) -> str:
    """The screen shows no control character, no link, no action, and each of ``literal``."""
    text, actions = screen_cells(app)
    bad = sorted({f"U+{ord(c):04X}" for c in text if c in FORBIDDEN and c != "\n"})
    assert not bad, f"{where}: control characters on screen: {bad}"
    assert not actions, f"{where}: {actions}"
    for piece in literal:
        assert piece in text, f"{where}: {piece!r} not shown literally:\n{text}"
    return text


def toasts(app: App[Any]) -> str:
    """The text of the notifications on screen."""
    return "\n".join(str(toast.render()) for toast in app.screen.query(Toast))


async def settle(pilot: Pilot[None], predicate: Any) -> None:
    await wait_until(pilot, predicate, limit=20)
    await pilot.pause(0.1)  # and let the screen draw it


def run(coroutine: Any) -> None:
    asyncio.run(coroutine)


# -- the dashboard -------------------------------------------------------------------------------


def test_every_panel_shows_log_text_inert(session: Path) -> None:
    async def drive() -> None:
        app = CtxtopApp(session)
        async with app.run_test(size=(160, 50), notifications=True) as pilot:
            await settle(
                pilot,
                lambda: (
                    app.view is not None
                    and app.view.analysis is not None
                    and app.tools.row_count > 0
                ),
            )
            text = assert_inert(app, "overview (header, tools, events, tree, sub-agents)", MARKUP)
            events = [str(app.events.get_row_at(i)[1]) for i in range(app.events.row_count)]
            if "claude" in session.parts:
                assert any(row.startswith(MARKUP) for row in events)  # the trigger, literally
            assert "evil" in text
            # A long hostile model name and title leave the live/paused state in the header.
            assert "LIVE" in text.splitlines()[0]
            assert app.is_running  # nothing clicked app.quit

            await pilot.press("v")
            await pilot.pause(0.2)
            tree = app.prompt_tree.outline_tree
            for _ in range(12):  # open what the tree holds, row by row
                await pilot.press("down")
                node = tree.cursor_node
                if node is not None and node.allow_expand and not node.is_expanded:
                    node.expand()
                await pilot.pause(0.02)
            assert_inert(app, "tree view (prompt tree, context by kind, sub-agents)", MARKUP)

            await pilot.press("slash")
            await pilot.press(*"[bold red]")
            await pilot.press("enter")
            await settle(pilot, lambda: bool(tree.matches))
            assert_inert(app, "prompt tree search", "[bold red]")
            await pilot.press("escape")

            await pilot.press("b")  # typed text is shown as typed too
            await pilot.press(*"[link=x", "enter")
            await settle(pilot, lambda: "not a token count" in screen_cells(app)[0])
            assert_inert(app, "what-if window error", "not a token count: '[link=x'")
            await pilot.press("escape")

            await pilot.press("question_mark")
            await pilot.pause(0.1)
            assert_inert(app, "help")
            await pilot.press("escape")

            if "claude" in session.parts:  # enter on its compaction: the compaction view
                row = next(i for i, text in enumerate(events) if "compaction" in text)
                app.events.move_cursor(row=row)
                app.events.focus()
                await pilot.press("enter")
                await settle(pilot, lambda: isinstance(app.screen, CompactionScreen))
                body = app.screen.query_one("#body")
                await settle(pilot, lambda: "inspecting" not in str(body.render()))
                assert_inert(app, "compaction view", MARKUP, "U1")
                await pilot.press("escape")
                await settle(pilot, lambda: not isinstance(app.screen, CompactionScreen))

            await pilot.press("e")
            edit = app.screen
            assert isinstance(edit, EditScreen)
            await settle(pilot, lambda: edit.outcome is not None)
            edit.query_one("#edit-keep-turns", Input).value = "0"
            await settle(
                pilot,
                lambda: edit.outcome is not None and bool(edit.outcome.preview.details.changed),
            )
            assert_inert(app, "editing panel", MARKUP)
            await pilot.press("escape")

            await pilot.press("c")
            compact = app.screen
            assert isinstance(compact, CompactScreen)
            compact.query_one("#compact-keep-rounds", Input).value = "0"
            await settle(
                pilot,
                lambda: (
                    compact.outcome is not None
                    and bool(compact.outcome.preview.details.cut.summarised_rounds)
                ),
            )
            assert_inert(app, "compaction panel", MARKUP)
            compact.query_one("#compact-summarizer", Select).value = "llm"  # no model set: fails
            await settle(
                pilot,
                lambda: (
                    compact.outcome is not None
                    and compact.outcome.preview.details.summarizer_requested == "llm"
                ),
            )
            assert_inert(app, "compaction panel, llm fallback", MARKUP)
            await pilot.click("#compact-write")
            await settle(pilot, lambda: compact.written is not None)
            assert_inert(app, "compaction panel, fork written", MARKUP)
            await pilot.press("escape")
            await settle(pilot, lambda: "Fork written" in toasts(app))
            if compact.written.resume_command:  # Claude Code's: it names the cwd
                assert f"resume with: cd '/home/dev/{MARKUP}" in toasts(app)
            assert_inert(app, "notification of the written fork", MARKUP)
            assert app.is_running

    run(drive())


def test_status_line_and_notifications_show_a_hostile_file_name_inert(tmp_path: Path) -> None:
    """The status line (loading, not a session log) and notifications quote the file's path."""
    # No "/" in a file name: opening tags only (they would restyle the rest of the line).
    folder = tmp_path / "[bold red]X [link=file:evil]x [@click=app.quit]q \x1b[2J\x07\u202e"
    folder.mkdir()
    path = folder / "notes.txt"
    path.write_text("not a session log\n")

    async def drive() -> None:
        app = CtxtopApp(path)
        async with app.run_test(size=(200, 30), notifications=True) as pilot:
            await settle(pilot, lambda: app.status.has_class("shown"))
            assert_inert(app, "status line", "[bold red]X", "[link=file:evil]", "[@click=")
            app.pinned = False  # as if following the newest session
            app.on_newer_session(NewerSession(path.with_name("other.jsonl")))
            await settle(pilot, lambda: "other.jsonl" in toasts(app))
            assert "[link=file:evil]" in toasts(app)
            assert_inert(app, "following a newer session", "[bold red]X", "[link=file:evil]")

    run(drive())


def test_panel_titles_show_a_hostile_session_file_name_inert(tmp_path: Path) -> None:
    """The editing and compaction panels name the session file in their border titles."""
    source = write_claude_session(tmp_path / "claude")
    # Short enough to be shown whole: a long name is elided in the middle.
    path = source.with_name("[b]X[u]y \x1b[2J\u202e.jsonl")
    source.rename(path)

    async def drive() -> None:
        app = CtxtopApp(path)
        async with app.run_test(size=(160, 40)) as pilot:
            await settle(pilot, lambda: app.view is not None and app.view.analysis is not None)
            for key, panel in (("e", EditScreen), ("c", CompactScreen)):
                await pilot.press(key)
                assert isinstance(app.screen, panel)
                await pilot.pause(0.2)
                assert_inert(app, f"{panel.__name__} title", "[b]X[u]y \\x1b[2J\\u202e.jsonl")
                await pilot.press("escape")

    run(drive())


def test_the_no_session_screen_shows_hostile_places_inert() -> None:
    places = [f"{MARKUP} {LINK} {CLICK} {ESCAPES}/.claude/projects"]

    async def drive() -> None:
        app = CtxtopApp(None, places=places)
        async with app.run_test(size=(160, 30)) as pilot:
            await pilot.pause(0.2)
            assert_inert(app, "no-session screen", MARKUP, LINK, CLICK)

    run(drive())


def test_a_real_terminal_keeps_its_screen_and_title(tmp_path: Path) -> None:
    """tmux runs the dashboard on the hostile session: the panels stay on screen (no clear),
    the markup is there literally, and the pane's title is not the one the log asks for."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    path = write_claude_session(tmp_path / "claude")
    with ctxtop_in_tmux(str(path)) as name:
        shown, screen = wait_for_screen(name, "by tokens", limit=30)
        assert shown, screen
        time.sleep(1.0)  # a few redraws
        shown, screen = wait_for_screen(name, MARKUP, limit=10)
        assert shown, screen
        assert "Context" in screen and "Tools" in screen
        title = subprocess.run(
            ["tmux", "display-message", "-p", "-t", name, "#{pane_title}"],
            capture_output=True,
            text=True,
        ).stdout
        assert "PWNED" not in title


# -- the CLI's text output -----------------------------------------------------------------------


def terminal_output(*argv: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> bytes:
    """``ctxtop ARGV``'s stdout bytes, as a terminal would get them."""
    done = subprocess.run(
        [sys.executable, "-c", SUBPROCESS_MAIN, *argv],
        input=stdin,
        capture_output=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout


def assert_plain(output: bytes, where: str) -> str:
    text = output.decode("utf-8")
    lines = text.split("\n")
    bad = sorted({f"U+{ord(c):04X}" for line in lines for c in line if c in FORBIDDEN})
    assert not bad, f"{where}: control characters in the output: {bad}"
    return text


def cli_sessions(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    yield "claude-code", write_claude_session(tmp_path / "claude")
    yield "openai-messages", write_generic_session(tmp_path)


def test_report_text_output_is_plain(tmp_path: Path) -> None:
    for name, path in cli_sessions(tmp_path):
        text = assert_plain(terminal_output("report", str(path)), f"report of {name}")
        assert MARKUP in text


def test_sessions_text_output_is_plain(tmp_path: Path) -> None:
    write_claude_session(tmp_path / "claude")
    env = {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    text = assert_plain(terminal_output("sessions", "--agent", "claude-code", env=env), "sessions")
    assert MARKUP in text


def test_statusline_output_is_plain(tmp_path: Path) -> None:
    path = write_claude_session(tmp_path / "claude")
    status = {"transcript_path": str(path), "model": {"display_name": MODEL}, "cwd": CWD}
    line = assert_plain(
        terminal_output("statusline", stdin=json.dumps(status).encode()), "statusline"
    )
    assert line.startswith("ctx ")  # the figures, from the transcript

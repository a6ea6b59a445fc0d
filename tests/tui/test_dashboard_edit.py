"""``e``: the editing panel, driven through the pilot: the preview follows the policy, the
confirmation writes a fork beside the session (the session itself untouched), shows how to
resume it, and the event log records the edit. On one long agentic turn the default clears all
but the last 3 tool uses, and a policy that clears nothing says why and what would clear."""

from __future__ import annotations

import argparse
import hashlib
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import Watch
from dashboard_support import (
    event_texts,
    frozen_clock,
    result_labels,
    synchronous,
    wait_until,
    write_lines,
)
from textual.pilot import Pilot
from textual.widgets import Button, Input, Select, Static

from ctxtop.engine.cli.main import main
from ctxtop.engine.editing import action_log
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.editing.pools import Target
from ctxtop.engine.forks.edit import edit_session
from ctxtop.engine.live.demo import demo_lines
from ctxtop.tui import format as fmt
from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.launch import build_app
from ctxtop.tui.screens import edit_panel as edit_screen
from ctxtop.tui.screens.edit_panel import EditScreen

ONE_TURN = (  # one prompt, 12 tool calls, by the real Claude Code CLI (its PROVENANCE.md)
    Path(__file__).resolve().parents[2]
    / "tests/data/one_turn/claude-code/b6a9545e-0d9d-4547-a30b-76c3b71a6ebd.jsonl"
)
MANY_RESULTS = (
    Path(__file__).resolve().parents[2]
    / "sample_sessions/claude-code/projects/-path-to-Demo"
    / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
)


def shown(screen: EditScreen) -> str:
    return str(screen.query_one("#edit-preview", Static).render())


async def open_panel(pilot: Pilot[None], app: CtxtopApp) -> EditScreen:
    """``e`` once the dashboard has analysed the session."""
    await wait_until(pilot, lambda: app.view is not None and app.view.analysis is not None)
    await pilot.press("e")
    screen = app.screen
    assert isinstance(screen, EditScreen)
    return screen


@synchronous
async def test_a_policy_preview_then_the_fork_and_its_event(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    write_lines(session, len(demo_lines()))
    digest = hashlib.sha256(session.read_bytes()).hexdigest()
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_panel(pilot, app)
        # The default policy keeps the last three tool uses: the sample's one result stays,
        # and the panel says so and what would clear it.
        await wait_until(pilot, lambda: "nothing to clear" in shown(screen))
        assert "nothing to clear: its only tool use is among the last 3 kept" in shown(screen)
        assert "set keep tool uses to 0 to clear 1 result" in shown(screen)
        assert screen.query_one("#edit-write", Button).disabled

        await pilot.press("backspace", "0")  # the focused field: keep no tool use
        await wait_until(pilot, lambda: "tool result changes" in shown(screen))
        preview = shown(screen)
        assert "1 tool result changes:" in preview and "Bash" in preview
        assert screen.outcome is not None
        sections = screen.outcome.preview.details.sections
        results = next(r for r in sections if r.section == "tool_results")
        assert results.tokens_after < results.tokens_before
        assert f"tool results: {results.tokens_before} -> {results.tokens_after}" in preview
        assert "cache rewrite:" in preview and "pays off after" in preview
        assert not screen.query_one("#edit-write", Button).disabled

        # Another order (relevance: the analysis' scores, as ctxtop edit uses them) previews too.
        screen.query_one("#edit-order", Select).value = "relevance"
        await wait_until(
            pilot,
            lambda: (
                screen.outcome is not None
                and screen.outcome.preview.details.policy.order == "relevance"
            ),
        )
        await wait_until(pilot, lambda: "1 tool result changes:" in shown(screen))

        await pilot.pause()  # the panel laid out again around the new preview
        await pilot.click("#edit-write")
        await wait_until(pilot, lambda: "fork written" in shown(screen))
        done = shown(screen)
        assert "resume with: cd /home/dev/demo-project && claude --resume" in done
        forks = [path for path in tmp_path.iterdir() if path != session]
        assert len(forks) == 1 and forks[0].name in done
        assert "old tool result cleared" in forks[0].read_text()
        assert hashlib.sha256(session.read_bytes()).hexdigest() == digest
        assert [a["kind"] for a in action_log.read_actions()] == ["edit"]

        await pilot.click("#edit-close")
        assert not isinstance(app.screen, EditScreen)

        def logged() -> bool:
            return any(
                text.startswith("ctxtop edit: ") and forks[0].name in text
                for text in event_texts(app)
            )

        await wait_until(pilot, logged)


@synchronous
async def test_the_tree_marks_what_the_fork_cleared_and_the_fork_shows_it_cleared(
    tmp_path: Path,
) -> None:
    # A sample with a dozen tool results, of which a policy keeping no cycle clears some.
    session = tmp_path / MANY_RESULTS.name
    shutil.copyfile(MANY_RESULTS, session)
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.view is not None and app.view.outline is not None)
        before = result_labels(app)
        assert before and not any("⌫" in label for label in before.values())
        await pilot.press("e")
        screen = app.screen
        assert isinstance(screen, EditScreen)
        await wait_until(pilot, lambda: screen.outcome is not None)
        await pilot.pause()  # the panel laid out again around the first preview
        # The turns policy with no turn kept whole (typing a count picks its policy).
        await pilot.click("#edit-keep-turns")
        await pilot.press("end", "backspace", "0")
        # One result left to clear: an ls; the TodoWrites saved a token each and now stay.
        await wait_until(pilot, lambda: "1 tool result changes:" in shown(screen))
        assert "policy turns: keep no turn whole" in shown(screen)
        await pilot.pause()  # the panel laid out again around the new preview
        await pilot.click("#edit-write")
        await wait_until(pilot, lambda: "fork written" in shown(screen))
        assert screen.written is not None
        cleared = {change.tool_call_id for change in screen.written.preview.details.changed}
        fork = screen.written.fork
        assert fork is not None
        await pilot.click("#edit-close")
        await pilot.pause()
        after = result_labels(app)
        assert cleared and cleared <= set(after)
        marked = {call for call, label in after.items() if "⌫ cleared in fork" in label}
        assert marked == cleared
        assert set(after) - cleared  # results the fork kept stay unmarked

    fork_app = CtxtopApp(fork, clock=frozen_clock)
    async with fork_app.run_test(size=(120, 40)) as pilot:
        await wait_until(
            pilot, lambda: fork_app.view is not None and fork_app.view.outline is not None
        )
        labels = result_labels(fork_app)
        assert {call for call, label in labels.items() if "⌫" in label} == cleared
        assert not any("cleared in fork" in label for label in labels.values())


@synchronous
async def test_the_panel_clears_old_results_of_one_turn_and_explains_a_policy_that_cannot(
    tmp_path: Path,
) -> None:
    session = tmp_path / ONE_TURN.name
    shutil.copyfile(ONE_TURN, session)
    whole_turn = edit_session(session, Policy(keep_turns=0), dry_run=True).as_json()
    calls = [change["tool_call_id"] for change in whole_turn["changed"]]  # all 12, in order
    assert len(calls) == 12
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_panel(pilot, app)
        await wait_until(pilot, lambda: "tool results change:" in shown(screen))
        outcome = screen.outcome
        assert outcome is not None
        changed = outcome.preview.details.changed
        assert [change.tool_call_id for change in changed] == calls[:-3]
        preview = shown(screen)
        assert "policy tool uses: keep the last 3 tool uses" in preview
        assert "9 tool results change:" in preview
        assert not screen.query_one("#edit-write", Button).disabled
        terms = str(screen.query_one("#edit-terms", Static).render())
        assert "turn: a request of the user and all that answered it" in terms
        assert "tool use: one tool call and its result" in terms

        screen.query_one("#edit-policy", Select).value = "turns"
        await wait_until(pilot, lambda: "nothing to clear" in shown(screen))
        preview = shown(screen)
        assert "policy turns: keep the last 3 turns whole" in preview
        assert (
            "nothing to clear: all 12 tool uses are in the last 3 turns (the session has 1)"
            in preview
        )
        saving = fmt.tokens(whole_turn["cleared_tokens"])
        assert f"set keep turns to 0 to clear 12 results ({saving}≈ tokens)" in preview
        assert "--keep-cycles" not in preview  # the panel's field names, not the CLI's flags
        assert screen.query_one("#edit-write", Button).disabled

        # Following the suggestion clears what it said.
        screen.query_one("#edit-keep-turns", Input).value = "0"
        await wait_until(pilot, lambda: "12 tool results change:" in shown(screen))
        assert screen.outcome is not None
        assert screen.outcome.preview.details.cleared_tokens == whole_turn["cleared_tokens"]
        assert sorted(path.name for path in tmp_path.iterdir()) == [session.name]


@synchronous
async def test_a_new_policy_previews_in_memory_without_reading_or_counting_the_session_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, watch: Watch
) -> None:
    """The panel reads the session once, for its first preview; each later one (a new policy)
    opens no file and counts no text of the session again: only what the fork changes."""
    session = tmp_path / ONE_TURN.name
    shutil.copyfile(ONE_TURN, session)
    real_preview = edit_screen.preview_edit

    def preview(*args: Any, **kwargs: Any) -> Any:  # watched in the panel's worker thread
        with watch.active():
            return real_preview(*args, **kwargs)

    monkeypatch.setattr(edit_screen, "preview_edit", preview)
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_panel(pilot, app)
        await wait_until(pilot, lambda: "9 tool results change:" in shown(screen))
        first = screen.preview
        assert first is not None and first.loaded.state is not None
        context = first.loaded.state.context
        texts = {block.content() for message in context for block in message.blocks}
        watch.clear()
        screen.query_one("#edit-keep-tool-uses", Input).value = "0"
        await wait_until(pilot, lambda: "12 tool results change:" in shown(screen))
        assert screen.preview is not None and screen.preview.loaded is first.loaded
        assert watch.opened == []
        assert watch.counted and not texts.intersection(watch.counted)  # new placeholders only


@pytest.mark.parametrize("height", [24, 18])
@synchronous
async def test_the_buttons_stay_in_view_and_the_rest_scrolls(tmp_path: Path, height: int) -> None:
    """Issue 27 item 4, the editing panel: its choices and preview scroll above the buttons
    when they do not fit (at 80x24 by a line with this preview; lower by more); the buttons
    went below the screen, where Tab still reached them."""
    session = tmp_path / ONE_TURN.name
    session.write_bytes(ONE_TURN.read_bytes())
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(80, height)) as pilot:
        screen = await open_panel(pilot, app)
        await wait_until(pilot, lambda: screen.outcome is not None)
        await pilot.pause()
        for button in screen.query(Button):
            assert screen.region.contains_region(button.region), (button, button.region)
        body = screen.query_one(".panel-body")
        assert body.max_scroll_y > 0
        assert not body.region.overlaps(screen.query_one(".buttons").region)


LARGE = (  # one prompt, 9 tool calls, two Reads of 37.5k and 34k tokens
    Path(__file__).resolve().parents[2]
    / "sample_sessions/claude-code/projects/-home-dev-projects-calc-large"
    / "5fd531c1-30e6-4b1b-93ee-f38e6d1dafe6.jsonl"
)


@synchronous
async def test_a_target_clears_down_to_it_and_shows_each_kept_results_pool(
    tmp_path: Path,
) -> None:
    session = tmp_path / LARGE.name
    shutil.copyfile(LARGE, session)
    digest = hashlib.sha256(session.read_bytes()).hexdigest()
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_panel(pilot, app)
        await wait_until(pilot, lambda: screen.outcome is not None)
        screen.query_one("#edit-target", Input).value = "lots"
        await wait_until(pilot, lambda: "target: a % of the window or tokens" in shown(screen))
        assert screen.query_one("#edit-write", Button).disabled
        screen.query_one("#edit-target", Input).value = "40k"
        await wait_until(pilot, lambda: "target: 40,000 tokens, reached" in shown(screen))
        outcome = screen.outcome
        assert outcome is not None and outcome.preview.context.after <= 40_000
        # The same figures as ctxtop edit --target 40k gives for the sample the panel shows.
        policy = Policy(target=Target.parse("40k"))
        expected = edit_session(session, policy, dry_run=True, shown=screen.sample.shown).as_json()
        assert outcome.as_json()["target"] == expected["target"]
        assert outcome.as_json()["changed"] == expected["changed"]
        preview = shown(screen)
        assert "kept (mandatory pool): Read " in preview and "mandatory pool (priority" in preview
        assert "cache rewrite:" in preview
        screen.query_one("#edit-fill", Select).value = "minimal"
        await wait_until(
            pilot,
            lambda: (
                screen.outcome is not None
                and screen.outcome.preview.details.policy.fill == "minimal"
            ),
        )
        await wait_until(pilot, lambda: "optional pool (minimal) 0 of 0" in shown(screen))
        await pilot.pause()
        await pilot.click("#edit-write")
        await wait_until(pilot, lambda: "fork written" in shown(screen))
        written = screen.written
        assert written is not None and written.preview.details.policy.fill == "minimal"
        assert written.fork is not None and written.fork.exists()
        assert hashlib.sha256(session.read_bytes()).hexdigest() == digest


@synchronous
async def test_the_demos_fork_is_a_preview_kept_out_of_the_action_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo's fork said "resume with: cd /home/dev/demo-project && claude --resume …" for a
    file in a temporary folder removed on quit, and `undo --list` showed it afterwards."""
    app = build_app(argparse.Namespace(demo=True, session=None, agent=None), tmp_path)
    assert isinstance(app, CtxtopApp) and app.demo is not None
    app.demo.interval, app.demo.pause = 0.002, 600.0  # the whole sample, then it stays
    async with app.run_test(size=(120, 40)) as pilot:
        demo = app.demo

        def all_shown() -> bool:  # the whole sample replayed and on screen
            size = demo.target.stat().st_size if demo.finished else -1
            return app.view is not None and app.view.bytes_read == size

        await wait_until(pilot, all_shown)
        screen = await open_panel(pilot, app)
        await wait_until(pilot, lambda: screen.outcome is not None)
        await pilot.pause()
        await pilot.click("#edit-keep-tool-uses")  # its one tool use is among the last 3
        await pilot.press("end", "backspace", "0")
        await wait_until(pilot, lambda: "1 tool result changes:" in shown(screen))
        await pilot.pause()
        await pilot.click("#edit-write")
        await wait_until(pilot, lambda: "fork written" in shown(screen))
        text = shown(screen)
    assert "a preview" in text and "removed on quit" in text
    assert "resume with" not in text and "claude --resume" not in text
    assert "undo with" not in text
    assert action_log.read_log() == []
    assert main(["undo", "--list"]) == 0
    assert capsys.readouterr().out.startswith("no forks written by ctxtop edit")


@synchronous
async def test_a_fork_written_while_paused_says_what_it_leaves_out(tmp_path: Path) -> None:
    """The panel opened while paused previews the frozen sample, and the fork is made from it;
    it did not say that the lines the agent wrote since the pause are not in the fork."""
    session = tmp_path / "session.jsonl"
    total = len(demo_lines())
    write_lines(session, total - 4)
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.view is not None and app.view.analysis is not None)
        await pilot.press("space")
        write_lines(session, 4, start=total - 4)  # the agent goes on meanwhile
        screen = await open_panel(pilot, app)
        await wait_until(pilot, lambda: screen.outcome is not None)
        await pilot.pause()
        await pilot.click("#edit-keep-tool-uses")
        await pilot.press("end", "backspace", "0")
        await wait_until(pilot, lambda: "tool result changes:" in shown(screen))
        await pilot.pause()
        await pilot.click("#edit-write")
        await wait_until(pilot, lambda: "fork written" in shown(screen))
        text = shown(screen)
    assert "as shown when paused: the 4 lines the agent wrote since are not in it" in text


@synchronous
async def test_backspace_and_a_digit_read_together_both_count(tmp_path: Path) -> None:
    """Textual's Input ran backspace as a later action: "3", backspace and "0" arriving in one
    read (typed fast, or sent together by the terminal) left the field empty."""
    session = tmp_path / "session.jsonl"
    write_lines(session, len(demo_lines()))
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_panel(pilot, app)
        await wait_until(pilot, lambda: screen.outcome is not None)
        field = screen.query_one("#edit-keep-tool-uses", Input)
        field.focus()
        await pilot.press("end")
        app.simulate_key("backspace")  # both queued before either is handled
        app.simulate_key("0")
        await wait_until(pilot, lambda: "policy tool uses: keep no tool use" in shown(screen))
        assert field.value == "0"

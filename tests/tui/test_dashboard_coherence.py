"""Issue 15, what a newcomer sees: a what-if window and the demo named where the figures are,
paused panels that preview the frozen sample, the demo's sub-agent in its panel, every key
discoverable from the footer or the palette, help that scrolls at 80x24, panel hints in the
panel's own words."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from dashboard_support import (
    COMPACTION_LINE,
    append_each_line,
    frozen_clock,
    screen_lines,
    screen_rows,
    synchronous,
    wait_until,
    write_companions,
    write_lines,
)
from textual.pilot import Pilot
from textual.widgets import Input, Static
from textual.widgets._footer import FooterKey

from ctxtop.engine.forks.transaction import Details, Outcome
from ctxtop.engine.live.demo import demo_lines, opening
from ctxtop.tui import format as fmt
from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.launch import build_app
from ctxtop.tui.screens.compact_panel import CompactScreen
from ctxtop.tui.screens.edit_panel import EditScreen
from ctxtop.tui.screens.help import HelpScreen


def whole_sample(tmp_path: Path, count: int | None = None) -> Path:
    session = tmp_path / "session.jsonl"
    write_lines(session, len(demo_lines()) if count is None else count)
    return session


def analysed(app: CtxtopApp) -> bool:
    return app.view is not None and app.view.analysis is not None


def header_text(app: CtxtopApp) -> str:
    return str(app.header.render())


def gauge_text(app: CtxtopApp) -> str:
    return str(app.gauge.render())


async def panel_preview(
    pilot: Pilot[None], app: CtxtopApp, key: str, figures: str
) -> tuple[Outcome[Details], str]:
    """Open the edit (e) or compaction (c) panel; its first preview and the figures shown."""
    await pilot.press(key)
    panel = app.screen
    assert isinstance(panel, EditScreen | CompactScreen)
    await wait_until(pilot, lambda: panel.outcome is not None)
    assert panel.outcome is not None
    return panel.outcome, str(panel.query_one(figures, Static).render())


@synchronous
async def test_a_what_if_window_shows_in_the_gauge_and_the_header(tmp_path: Path) -> None:
    """Case 3: the gauge measured the fill against the model's window while the sections used
    the what-if one, and nothing on top said a what-if was on."""
    app = CtxtopApp(whole_sample(tmp_path), clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: analysed(app))
        own = app.view.gauge  # type: ignore[union-attr]
        assert f"/ {fmt.tokens(own.window)} " in gauge_text(app)
        assert "WHAT-IF" not in header_text(app)

        await pilot.press("b", *"64000", "enter")
        await wait_until(pilot, lambda: analysed(app) and app.view.analysis.budget_overridden)  # type: ignore[union-attr]
        gauge = gauge_text(app)
        assert f"{fmt.tokens(own.tokens)}" in gauge and "/ 64.0k " in gauge
        assert "what-if window" in gauge
        assert "WHAT-IF window 64.0k" in header_text(app)
        # The percentage is of the what-if window, not of the model's.
        assert f"{100 * own.tokens / 64000:.1f} %" in gauge

        await pilot.press("b", "ctrl+u", "enter")  # empty: the model's own window again
        await wait_until(pilot, lambda: analysed(app) and not app.view.analysis.budget_overridden)  # type: ignore[union-attr]
        assert f"/ {fmt.tokens(own.window)} " in gauge_text(app)
        assert "WHAT-IF" not in header_text(app)


@synchronous
async def test_paused_panels_preview_the_frozen_sample(tmp_path: Path) -> None:
    """Case 5: while paused, the edit and compaction panels read the file as it is now, so
    their figures moved under a frozen gauge."""
    session = whole_sample(tmp_path, 50)
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: analysed(app))
        await pilot.press("space")
        frozen = app.view.gauge.tokens  # type: ignore[union-attr]
        write_lines(session, 14, start=50)  # the requests before the /compact: more context
        await wait_until(pilot, lambda: app._held is not None)
        newer = app._held.gauge.tokens  # type: ignore[union-attr]
        assert newer > frozen

        # Each panel previews the frozen bytes and starts from the frozen gauge's figure.
        for key, figures in (("e", "#edit-preview"), ("c", "#compact-figures")):
            outcome, shown = await panel_preview(pilot, app, key, figures)
            assert outcome.preview.context.before == frozen
            assert f"whole context {fmt.tokens(frozen)}" in shown
            await pilot.press("escape")

        await pilot.press("space")  # resumed: the panels start from the newer figure
        outcome, _ = await panel_preview(pilot, app, "e", "#edit-preview")
        assert outcome.preview.context.before == newer


@synchronous
async def test_the_demo_fills_the_sub_agents_panel_and_says_demo_with_one_clock(
    tmp_path: Path,
) -> None:
    """Cases 7 and 10: the demo's Agent call ran a sub-agent whose log never appeared (an empty
    panel beside its result in the tree); the demo was labelled LIVE, with two clocks."""
    app = build_app(argparse.Namespace(demo=True, session=None, agent=None), tmp_path)
    assert isinstance(app, CtxtopApp) and app.demo is not None
    demo = app.demo
    demo.interval, demo.pause = 0.002, 600.0  # the whole sample, then it stays on screen
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: demo.finished and app.view is not None)
        await wait_until(pilot, lambda: app.view.lines_read == len(demo_lines()))  # type: ignore[union-attr]
        header = header_text(app)
        assert "DEMO loop 1" in header and "LIVE" not in header
        # One clock, in local time, and the agent's last write (the demo's, just now) as an age.
        assert len(re.findall(r"\d\d:\d\d", header)) == 1
        assert re.search(r"updated \d\d:\d\d:\d\d, agent wrote \d+ s ago", header), header

        await wait_until(pilot, lambda: app.subagents.row_count > 0)
        assert app.subagents.display  # shown at this size
        names = [str(app.subagents.get_row_at(i)[0]) for i in range(app.subagents.row_count)]
        assert all(names)


@synchronous
async def test_the_paused_demo_still_says_demo(tmp_path: Path) -> None:
    """Issue 27 item 6: pausing the demo replaced DEMO with PAUSED, as if a real session had
    been paused."""
    app = build_app(argparse.Namespace(demo=True, session=None, agent=None), tmp_path)
    assert isinstance(app, CtxtopApp) and app.demo is not None
    app.demo.interval = 0.002
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.view is not None)
        await pilot.press("space")
        await pilot.pause()
        header = header_text(app)
        assert "DEMO loop 1 PAUSED" in header and "LIVE" not in header, header
        await pilot.press("space")
        await pilot.pause()
        assert "PAUSED" not in header_text(app) and "DEMO loop" in header_text(app)


def notified(app: CtxtopApp) -> str:
    """The notifications shown so far, title and message."""
    return " ".join(f"{n.title}: {n.message}" for n in app._notifications)


@synchronous
async def test_f_and_l_say_why_they_do_nothing(tmp_path: Path) -> None:
    """Issue 27 item 8: f on a session given on the command line or in the demo, and l with
    nothing applied live, did nothing and said nothing."""

    async def says(pilot: Pilot[None], app: CtxtopApp, key: str, *words: str) -> None:
        await pilot.press(key)
        await pilot.pause()
        shown = notified(app)
        assert all(word in shown for word in words), shown

    app = CtxtopApp(whole_sample(tmp_path), clock=frozen_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: analysed(app))
        await says(
            pilot,
            app,
            "f",
            "Pin / follow newest: nothing to do",
            "given on the command line stays on screen",
        )
        await says(
            pilot,
            app,
            "l",
            "Stop applying live: nothing to do",
            "Nothing is applied live to this session",
        )

    demo = build_app(argparse.Namespace(demo=True, session=None, agent=None), tmp_path)
    assert isinstance(demo, CtxtopApp)
    async with demo.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: demo.view is not None)
        await says(pilot, demo, "f", "The demo replays one recorded session")


@synchronous
async def test_every_key_is_in_the_footer_or_the_palette_at_80_columns(tmp_path: Path) -> None:
    """Case 8: the footer never named c and dropped space in the tree view; t said nothing of
    the theme it chose."""
    app = CtxtopApp(whole_sample(tmp_path), clock=frozen_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: analysed(app))
        for keys in ((), ("v",)):  # the overview, then the tree view
            await pilot.press(*keys)
            await pilot.pause()
            footer = {
                key.key_display or key.key: key
                for key in app.screen.query(FooterKey)
                if key.display
            }
            for shown in ("q", "?", "space", "v", "e", "c", "^p"):
                assert shown in footer, (keys, shown, sorted(footer))
                assert footer[shown].region.right <= 80, (keys, shown)  # not cut off
        # The keys the footer leaves out are in the palette, by the name the help gives them.
        titles = {command.title for command in app.get_system_commands(app.screen)}
        for action in ("cycle_profile", "search", "sort_tools", "cycle_theme", "budget"):
            assert app.ACTIONS[action][0] in titles
        await pilot.press("t")
        await pilot.pause()
        last = list(app._notifications)[-1]
        assert last.title == "Theme" and last.message.startswith(app.theme + " (2 of ")


@synchronous
async def test_the_footer_keeps_its_order_in_the_tree_and_names_the_search_keys(
    tmp_path: Path,
) -> None:
    """Issue 27 item 11: in the tree view space moved to the front of the footer; during a
    ``/`` search the footer was empty."""
    app = CtxtopApp(whole_sample(tmp_path), clock=frozen_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: analysed(app) and "^p" in screen_rows(app)[-1])
        overview = screen_rows(app)[-1]
        assert overview.startswith("q Quit ? Help space Pause v Tree"), overview
        await pilot.press("v")
        await pilot.pause()
        assert screen_rows(app)[-1] == overview
        await pilot.press("space")  # still the app's pause, from the tree
        assert app.paused
        await pilot.press("space", "slash", *"bash")
        await pilot.pause()
        searching = screen_rows(app)[-1]
        assert "Next match" in searching and "esc Back to the tree" in searching, searching
        await pilot.press("escape")
        await pilot.pause()
        assert screen_rows(app)[-1] == overview and not app.paused


@synchronous
async def test_the_help_scrolls_to_its_last_line_at_80x24_and_nothing_wraps(
    tmp_path: Path,
) -> None:
    """Case 6: at 80x24 the help looked cut after its first section (nothing said it scrolls)
    and a legend line wrapped mid-phrase."""
    app = CtxtopApp(whole_sample(tmp_path, 10), clock=frozen_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        await pilot.pause()
        scroll = help_screen.query_one("VerticalScroll")
        text = help_screen.query_one(Static)
        assert scroll.max_scroll_y > 0  # more than fits: it must scroll, and say so
        assert "scroll" in str(scroll.border_subtitle)
        # Each line of the text is one line on screen: none wraps at 80 columns.
        assert text.size.height == len(str(text.render()).split("\n"))
        await pilot.press("end")
        await pilot.pause(0.5)
        assert scroll.scroll_y == scroll.max_scroll_y


@synchronous
async def test_panel_hints_use_the_panels_words(tmp_path: Path) -> None:
    """Case 11: hints named CLI flags (--keep-rounds, --keep-cycles) where the fields on screen
    are labelled differently; the words a panel counts in are explained on screen."""
    app = CtxtopApp(whole_sample(tmp_path, 50), clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: analysed(app))
        await pilot.press("c")
        compact = app.screen
        assert isinstance(compact, CompactScreen)
        keep = compact.query_one("#compact-keep-rounds", Input)
        keep.value = "99"  # more rounds than the session has: nothing to summarise
        figures = compact.query_one("#compact-figures", Static)
        # (the default's preview may say "nothing to compact: … not be smaller" first)
        await wait_until(pilot, lambda: "keep fewer rounds" in str(figures.render()))
        said = str(figures.render())
        assert "nothing to compact" in said and "--" not in said
        subtitle = str(compact.query_one("#compact-cut-box").border_subtitle)
        assert "round: a model reply + its tool calls" in subtitle
        await pilot.press("escape")

        await pilot.press("e")
        edit = app.screen
        assert isinstance(edit, EditScreen)
        await wait_until(pilot, lambda: edit.outcome is not None)
        on_screen = " ".join(str(static.render()) for static in edit.query(Static))
        assert "turn: a request of the user" in on_screen and "tool use: one tool call" in on_screen
        assert "--keep" not in on_screen


def shown_tokens(figure: str) -> float:
    """A figure as the panels print it ("22.0k", "431", "1.2M", marked "22.0k*" or, in the
    events, "*22.0k") in tokens."""
    number = figure.strip("*≈~=≡?").replace(",", "").replace("−", "-")
    scale = {"k": 1e3, "M": 1e6}.get(number[-1:], 1.0)
    return float(number.rstrip("kM")) * scale


def gauge_figure(app: CtxtopApp) -> float:
    match = re.search(r"%\s+(\S+) / ", gauge_text(app))
    assert match, gauge_text(app)
    return shown_tokens(match.group(1))


def sections_sum(app: CtxtopApp) -> float:
    """The parts of the prompt the sections panel lists (not what is kept free or left)."""
    total = 0.0
    for line in str(app.sections.render()).split("\n"):
        if line.startswith(("kept free", "free space", "pruned", "  ")):
            continue  # not parts, or the rest of a long label
        total += shown_tokens(line.split()[-1] if "/" not in line else line.split()[-3])
    return total


class FrameRecorder(CtxtopApp):
    """The app, noting the figures every panel shows each time the screen is updated."""

    frames: list[tuple[int, float, float, float, str]]

    def on_view_applied(self) -> None:
        frames = self.__dict__.setdefault("frames", [])
        if self.sections.analysis is None or not self.gauge._component_styles:
            return  # "analysing …", or not styled yet (starting): nothing drawn to disagree
        categories = sum(row.tokens for row in self.categories.rows)
        frames.append(
            (
                self.view.lines_read if self.view else 0,
                gauge_figure(self),
                sections_sum(self),
                categories,
                str(self.sections.render()),
            )
        )


# Shown figures are rounded to 0.1k each: five parts and the gauge may add up 0.25k apart.
ROUNDING = 260


@synchronous
async def test_every_frame_through_the_compaction_shows_one_context_figure(
    tmp_path: Path,
) -> None:
    """The demo right after its /compact: the gauge said 22.0k (the agent's count of the new
    history plus the system prompt) while the sections added up to 19.3k, then 19.7k …: the
    summary and attachments the log writes after the boundary were not in it yet. One frame
    before that, the gauge had the new figure and the sections the previous sample's analysis
    (24.1k). Before the compaction, the gauge said 23.0k beside sections adding up to 23.4k
    (ctxtop's tokenizer counts more than the agent). Lines are appended one at a time, as the
    demo writes them, from the first request on."""
    first = 10
    session = whole_sample(tmp_path, first)
    app = FrameRecorder(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: analysed(app))
        async for _ in append_each_line(pilot, app, session, first):
            pass
        frames = app.frames
        assert any(line >= COMPACTION_LINE for line, *_ in frames)
        for line, gauge, sections, categories, text in frames:
            assert abs(sections - gauge) <= ROUNDING, (line, gauge, sections, text)
            assert abs(categories - gauge) <= 51, (line, gauge, categories)  # the gauge rounds
        # Right after the boundary the part the log does not show yet is a row of its own.
        right_after = [text for line, *_, text in frames if line == COMPACTION_LINE]
        assert right_after and "not in the log yet" in right_after[-1]
        # The events' "after" is the whole context, as the gauge gave it then (was 2.8k, the
        # agent's count of the messages alone); the system prompt and tools are the sections'
        # figure, which the first request after the compaction refines (19.3k -> 19.4k).
        after = next(gauge for line, gauge, *_ in frames if line == COMPACTION_LINE)
        event = next(e for e in app.events.events if e.kind == "compaction")
        assert abs(shown_tokens(event.text.split("-> ")[-1]) - after) <= 150, (event, after)


@synchronous
async def test_the_events_text_wraps_instead_of_being_cut_at_80x24(tmp_path: Path) -> None:
    """Case 6: at 80x24 the events row read "manual compaction: 23.9…"."""
    app = CtxtopApp(whole_sample(tmp_path), clock=frozen_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: analysed(app) and app.events.row_count == 1)
        await pilot.pause()
        event = app.events.events[0].text
        drawn = " ".join(
            line.strip("│ ").removeprefix(str(COMPACTION_LINE)).strip()
            for line in screen_lines(app.events)[1:]  # under the header
        )
        assert " ".join(drawn.split()).startswith(event), (event, screen_lines(app.events))


def section_labels(app: CtxtopApp) -> list[str]:
    """Each section's label as the panel draws it, a wrapped one joined again."""
    labels: list[str] = []
    for line in str(app.sections.render()).split("\n"):
        if line.startswith("  "):
            labels[-1] += " " + line.strip()
        else:
            labels.append(re.split(r" [█·]", line)[0].strip())
    return labels


def previewed_or_refused(app: CtxtopApp) -> bool:
    """The panel shows its preview, or why there is none (right after a compaction the
    compaction panel has nothing to summarise)."""
    if getattr(app.screen, "outcome", None) is not None:
        return True
    return any("nothing to" in str(static.render()) for static in app.screen.query(Static))


@synchronous
async def test_nothing_essential_is_cut_at_80x24(tmp_path: Path) -> None:
    """Found driving the demo in tmux at 80x24: a what-if gauge line wrapped and pushed its
    marks out of the box, Codex's "developer and AGENTS.md instr" was cut, the sub-agents'
    table ran out of its panel ("contex", "12.0"), the edit and compaction panels' titles
    ended in "…", and the compaction panel spent three lines on the file's path."""
    session = whole_sample(tmp_path, COMPACTION_LINE)  # right after the /compact
    write_companions(session)
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: analysed(app))
        await pilot.press("b", *"64000", "enter")
        await wait_until(pilot, lambda: analysed(app) and app.view.analysis.budget_overridden)  # type: ignore[union-attr]
        await pilot.pause()
        gauge = screen_lines(app.gauge)
        summary = next(line for line in gauge if " % " in line)
        assert "what-if" in summary and "to auto-compact" in summary, gauge
        assert any("E" in line and "A" in line for line in gauge), gauge  # the marks

        await pilot.press("p")  # the next profile: Codex's, with its long labels
        await wait_until(pilot, lambda: analysed(app) and app.view.analysis.profile == "codex")  # type: ignore[union-attr]
        await pilot.pause()
        assert app.view is not None and app.view.analysis is not None
        wanted = [section.label.split(" (")[0] for section in app.view.analysis.sections]
        shown = section_labels(app)
        assert all(any(label in line for line in shown) for label in wanted), (wanted, shown)

        await pilot.press("v")
        await wait_until(pilot, lambda: app.subagents.row_count > 0)
        await pilot.pause()
        header, row = screen_lines(app.subagents)[:2]
        assert "context" in header and "12.0k" in row, (header, row)
        await pilot.press("v")

        for key, title in (("e", "clear old tool results into a fork"), ("c", "into a fork")):
            await pilot.press(key)
            await wait_until(pilot, lambda: previewed_or_refused(app))
            await pilot.pause()
            box = next(widget for widget in app.screen.query("Vertical") if widget.border_title)
            said = str(box.border_title)
            # The border draws "╭─ " and " ─╮" around the title: a longer one is cut.
            assert title in said and len(said) + 6 <= box.size.width, (said, box.size.width)
            drawn = " ".join(str(static.render()) for static in app.screen.query(Static))
            assert str(session) not in drawn  # the title names the file
            await pilot.press("escape")


@synchronous
async def test_no_forecast_names_a_compaction_there_was_not(tmp_path: Path) -> None:
    """At the demo's start: "no forecast: it needs two requests since the last compaction"
    above "1 request · … · 0 compactions"."""
    app = CtxtopApp(whole_sample(tmp_path, opening(demo_lines())), clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: analysed(app))
        await pilot.pause()
        caption = str(app.history.caption.render())
        assert "0 compactions" in caption and "no forecast" in caption, caption
        assert "compaction:" not in caption and "since the last compaction" not in caption

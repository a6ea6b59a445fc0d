"""The analysis on the dashboard, driven through the pilot on a real session file: sections, the
prompt tree, the forecast, the what-if window (``b``), the layout profile (``p``), search (``/``)
and ctxtop's own actions in the event log."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from dashboard_support import event_texts, frozen_clock, synchronous, wait_until, write_lines
from rich.text import Text
from textual.message import Message

from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.analysis.profiles import available_profiles
from ctxtop.engine.analysis.report import analyze_session
from ctxtop.engine.config import Settings
from ctxtop.engine.editing import action_log
from ctxtop.engine.live.demo import demo_lines
from ctxtop.tui import format as fmt
from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.components.prompt_tree import PRUNED_MARK
from ctxtop.tui.format import mark
from ctxtop.tui.messages import SessionUpdated, ViewApplied


def struck(label: object) -> bool:
    assert isinstance(label, Text)
    return any("strike" in str(span.style) for span in label.spans)


def whole_sample(tmp_path: Path) -> Path:
    session = tmp_path / "session.jsonl"
    write_lines(session, len(demo_lines()))
    return session


def analysed(app: CtxtopApp) -> bool:
    return app.view is not None and app.view.analysis is not None


@synchronous
async def test_a_lower_what_if_budget_strikes_the_oldest_round_and_empty_restores(
    tmp_path: Path,
) -> None:
    session = tmp_path / "session.jsonl"
    write_lines(session, len(demo_lines()))
    posted: list[Message] = []
    app = CtxtopApp(session, settings=Settings(profile="copilot"), clock=frozen_clock)
    async with app.run_test(size=(120, 40), message_hook=posted.append) as pilot:
        await wait_until(pilot, lambda: analysed(app))
        assert app.view is not None and app.view.analysis is not None
        first = app.view.analysis
        assert first.profile == "copilot" and not first.pruned
        tree = app.prompt_tree.outline_tree
        rounds = [node for node in first.nodes if node.section == "history"]
        oldest, newer = rounds[0], rounds[1]
        await wait_until(pilot, lambda: oldest.id in tree.built)
        assert not any(struck(node.label) for node in tree.built.values())
        # Each figure says where it comes from: a round's tokens are the tokenizer's times the
        # session's factor (calibrated), a section's carry the sections panel's mark (the
        # system prompt's is inferred).
        assert str(tree.built[oldest.id].label).split()[0].endswith("~")
        marks = {section.name: section.provenance for section in first.sections}
        shown_sections = [name for name in marks if name in tree.built]
        assert shown_sections
        for name in shown_sections:
            figure = str(tree.built[name].label).split()[0]
            assert figure.endswith(mark(marks[name])), (name, figure)

        # A window whose prompt budget has no room for the oldest round (the renderer prunes
        # it message by message, no more than needed) and all the room for the newer one.
        window = newer.pruned_at_budget + first.thresholds.output_reserve  # type: ignore[operator]
        await pilot.press("b", *str(window), "enter")
        await wait_until(pilot, lambda: analysed(app) and app.view.analysis.budget_overridden)  # type: ignore[union-attr]
        analysis = app.view.analysis
        assert analysis is not None
        assert [item.id for item in analysis.pruned] == [oldest.id]
        assert struck(tree.built[oldest.id].label)
        assert PRUNED_MARK in str(tree.built[oldest.id].label)
        assert not struck(tree.built[newer.id].label)
        assert "what-if" in str(app.sections.border_subtitle)
        assert any(
            isinstance(m, ViewApplied) and m.view.analysis and m.view.analysis.pruned
            for m in posted
        )

        await pilot.press("b", "ctrl+u", "enter")  # empty: the model's own window
        await wait_until(pilot, lambda: analysed(app) and not app.view.analysis.budget_overridden)  # type: ignore[union-attr]
        assert not app.view.analysis.pruned  # type: ignore[union-attr]
        assert not struck(tree.built[oldest.id].label)


@synchronous
async def test_a_budget_that_is_not_a_number_is_refused_in_place(tmp_path: Path) -> None:
    session = whole_sample(tmp_path)
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: analysed(app))
        await pilot.press("b", *"lots", "enter")
        assert type(app.screen).__name__ == "BudgetScreen"
        assert "not a token count" in str(app.screen.query_one("#budget-error").render())
        await pilot.press("escape")
        assert type(app.screen).__name__ == "Screen"
        assert app.choice.window is None


@synchronous
async def test_p_cycles_the_layout_profiles(tmp_path: Path) -> None:
    session = whole_sample(tmp_path)
    app = CtxtopApp(session, clock=frozen_clock)
    names = available_profiles()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: analysed(app))
        seen = [app.view.analysis.profile]  # type: ignore[union-attr]
        assert seen == ["claude-code"]  # the agent's own
        for _ in names:
            await pilot.press("p")
            await wait_until(pilot, lambda: app.view.analysis.profile != seen[-1])  # type: ignore[union-attr]
            seen.append(app.view.analysis.profile)  # type: ignore[union-attr]
            # Where its figures are shown, the profile in effect, and whether it is the agent's.
            own = seen[-1] == "claude-code"
            foreign = "" if own else ", not the agent's"
            assert app.sections.border_title == f"Sections · {seen[-1]} profile{foreign}"
            header = str(app.header.render())
            assert (f"profile {seen[-1]}, not claude-code's" in header) is not own
            assert app.gauge.border_title == "Context" + ("" if own else f" · {seen[-1]} profile")
        assert sorted(seen[:-1]) == names and seen[-1] == seen[0]


@synchronous
async def test_the_forecast_of_requests_left_is_under_the_sparkline(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    write_lines(session, len(demo_lines()))
    reader = SessionReader(session)
    read_all(reader)
    assert reader.adapter is not None
    forecast = analyze_session(reader.adapter).forecast
    assert forecast.requests_left is not None and forecast.low is not None
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: analysed(app))
        caption = str(app.history.query_one("#history-caption").render())
        left = f"~{forecast.requests_left:.0f} requests left before auto-compaction"
        growth = f"at +{fmt.tokens(round(forecast.growth_per_request or 0))} per request"
        if f"{forecast.low:.0f}" == f"{forecast.high:.0f}":  # one value: no range (968–968)
            assert caption.startswith(f"{left} {growth}\n")
        else:
            assert caption.startswith(f"{left} ({forecast.low:.0f}–{forecast.high:.0f}) {growth}")
        # Plurals as they should be (the sample has one compaction).
        assert "· 1 compaction ·" in caption and "1 compactions" not in caption


@synchronous
async def test_appended_lines_grow_the_tree_and_the_sections(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    write_lines(session, 40)
    posted: list[Message] = []
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40), message_hook=posted.append) as pilot:
        await wait_until(pilot, lambda: analysed(app))
        before = app.view.outline  # type: ignore[union-attr]
        assert before is not None
        messages = {section.name: section.tokens for section in app.view.analysis.sections}  # type: ignore[union-attr]
        write_lines(session, len(demo_lines()), start=40)
        await wait_until(pilot, lambda: app.view.outline is not None and app.view.outline != before)  # type: ignore[union-attr]
        await wait_until(pilot, lambda: app.view.lines_read == len(demo_lines()))  # type: ignore[union-attr]
        after = app.view.analysis  # type: ignore[union-attr]
        assert after is not None
        assert {s.name: s.tokens for s in after.sections} != messages
        assert app.prompt_tree.outline_tree.outline == app.view.outline  # type: ignore[union-attr]
        assert any(isinstance(m, SessionUpdated) for m in posted)
        # The newest message is in the built tree: its round opened as the one before was open.
        newest = [n for n in app.view.outline.nodes if n.kind == "message"][-1]  # type: ignore[union-attr]
        await wait_until(pilot, lambda: newest.id in app.prompt_tree.outline_tree.built)


@synchronous
async def test_slash_finds_nodes_in_collapsed_parts_of_the_tree(tmp_path: Path) -> None:
    session = whole_sample(tmp_path)
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: analysed(app))
        assert not app.prompt_tree.display or not app.has_class("tree-view")
        await pilot.press("slash", *"compact", "enter")
        assert app.has_class("tree-view")
        tree = app.prompt_tree.outline_tree
        first = tree.cursor_node
        assert first is not None and first.data in tree.matches
        assert len(tree.matches) >= 2
        assert "compact" in str(first.label).lower()
        assert first.parent is not None and first.parent.is_expanded
        await pilot.press("enter")  # the next match
        second = tree.cursor_node
        assert second is not None and second.data == tree.matches[1]
        assert "compact" in str(second.label).lower()
        await pilot.press("escape")
        assert app.focused is tree


@pytest.fixture
def nine_hours_ahead(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time 9 h ahead of UTC, so that a clock shown in UTC would differ."""
    monkeypatch.setenv("TZ", "XST-9")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@synchronous
async def test_ctxtop_actions_on_this_session_reach_the_event_log(
    tmp_path: Path, nine_hours_ahead: None
) -> None:
    session = whole_sample(tmp_path)
    app = CtxtopApp(session, clock=frozen_clock)

    def rows() -> list[str]:
        return event_texts(app)

    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: analysed(app))
        assert not any("ctxtop" in row for row in rows())
        other = action_log.record("edit", source=str(tmp_path / "other.jsonl"), fork="x.jsonl")
        edit = action_log.record(
            "edit",
            source=str(session),
            fork=str(tmp_path / "fork.jsonl"),
            tokens_before=23900,
            tokens_after=12100,
        )
        await wait_until(pilot, lambda: any("ctxtop edit" in row for row in rows()))
        assert "ctxtop edit: 23.9k≈ -> 12.1k≈ in fork fork.jsonl" in rows()
        action_log.record("undo", edit_id=other["id"], fork="x.jsonl", removed=True)
        action_log.record(
            "undo", edit_id=edit["id"], fork=str(tmp_path / "fork.jsonl"), removed=True
        )
        await wait_until(pilot, lambda: any("ctxtop undo" in row for row in rows()))
        assert [row for row in rows() if row.startswith("ctxtop")] == [
            "ctxtop edit: 23.9k≈ -> 12.1k≈ in fork fork.jsonl",
            "ctxtop undo: fork fork.jsonl removed",
        ]
        # Issue 27 item 11: the "line" column holds line numbers only (it held an action's
        # clock time too); an action's time of day, local as the header's, starts its text.
        table = app.events
        cells = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        for line, text in cells:
            assert line == "" if "ctxtop" in text else line.isdigit(), (line, text)
        local = datetime.fromisoformat(edit["time"]).astimezone()  # 9 h ahead of UTC
        assert next(text for _, text in cells if "ctxtop edit" in text).startswith(
            local.strftime("%H:%M:%S ctxtop edit")
        )


@synchronous
async def test_sections_show_tokens_against_budgets_and_what_is_over(tmp_path: Path) -> None:
    session = whole_sample(tmp_path)
    app = CtxtopApp(session, settings=Settings(profile="copilot"), clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.sections.analysis is not None)
        panel = app.sections
        over = panel.get_component_rich_style("sections--over")

        def rows() -> dict[str, Text]:
            """Each section's line, by section name (one line per section, in order)."""
            assert panel.analysis is not None
            sections = panel.analysis.sections
            lines = panel.render().split("\n")[: len(sections)]  # then the pruned line
            return {section.name: line for section, line in zip(sections, lines, strict=True)}

        def over_budget(line: Text) -> bool:
            return any(span.style == over for span in line.spans)

        lines = rows()
        assert lines["system"].plain.startswith("system prompt")
        assert "* / " in lines["system"].plain  # inferred: the rest of the reported figure
        # The tokenizer's count times the factor the session's requests taught: calibrated.
        assert "~ / " in lines["attachments"].plain
        assert not any(over_budget(line) for line in lines.values())

        await pilot.press("b", *"20k", "enter")
        await wait_until(
            pilot, lambda: panel.analysis is not None and panel.analysis.budget_overridden
        )
        assert panel.analysis is not None
        spare = ("free", "autocompact_buffer")
        overs = {s.name for s in panel.analysis.sections if s.tokens > s.budget}
        assert overs - set(spare)  # 20k tokens hold less than the sample's prompt
        for name, line in rows().items():
            assert over_budget(line) == (name in overs and name not in spare), name


@synchronous
async def test_a_broken_profile_of_the_users_is_named_in_the_sections_panel(
    tmp_path: Path, isolated_dirs: Path
) -> None:
    folder = isolated_dirs / "config" / "profiles"
    folder.mkdir(parents=True)
    broken = folder / "mine.yaml"
    broken.write_text("name: mine\nsections: [unclosed\n")
    session = whole_sample(tmp_path)
    app = CtxtopApp(session, settings=Settings(profile="mine"), clock=frozen_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(
            pilot, lambda: app.view is not None and app.view.analysis_error is not None
        )
        text = str(app.sections.render())
        assert str(broken) in text and "invalid YAML" in text
        assert app.view is not None and app.view.gauge.tokens > 0  # the figures still show
        await pilot.press("p")  # the next profile analyses again
        await wait_until(pilot, lambda: app.sections.analysis is not None)

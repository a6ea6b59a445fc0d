"""``c``: the compaction panel, driven through the pilot: the preview shows the summary and the
tokens it saves, the confirmation writes a fork (the session itself untouched) with the summary
that was shown, the event log records it; the LLM summariser's failure and the user's stop are
said in the panel, and the structured summary is shown instead."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
import socket
import sys
from pathlib import Path

import pytest
from dashboard_support import event_texts, frozen_clock, screen_rows, synchronous, wait_until
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widgets import Button, Select, Static

from ctxtop.engine.cli.main import main
from ctxtop.engine.config import LLMSettings, Settings
from ctxtop.engine.editing import action_log
from ctxtop.tui import format as fmt
from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.screens.compact_panel import CompactScreen

ROOT = Path(__file__).resolve().parents[2]
CALC_MAIN = (
    ROOT / "tests/sessions/data/generated/claude-code/calc-main/"
    "e6da809c-ea6a-48e8-8ca6-02bf23adae92.jsonl"
)
sys.path.insert(0, str(ROOT / "tests/compaction"))
from llm_server import SummaryServer  # noqa: E402


@pytest.fixture(autouse=True)
def no_llm_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The settings passed to the app are the only ones (no CTXTOP_LLM_* from the shell)."""
    for name in ("BASE_URL", "MODEL", "SUMMARY_MODEL", "PROTOCOL"):
        monkeypatch.delenv(f"CTXTOP_LLM_{name}", raising=False)


def figures(screen: CompactScreen) -> str:
    return str(screen.query_one("#compact-figures", Static).render())


def summary(screen: CompactScreen) -> str:
    return str(screen.query_one("#compact-summary", Static).render())


def session_copy(tmp_path: Path, source: Path = CALC_MAIN) -> Path:
    target = tmp_path / source.name
    shutil.copyfile(source, target)
    return target


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return int(probe.getsockname()[1])


def llm_settings(base_url: str, timeout: float = 30.0) -> Settings:
    return Settings(llm=LLMSettings(base_url=base_url, model="summary-model", timeout=timeout))


def unreachable_llm_app(tmp_path: Path) -> CtxtopApp:
    """The app on a copy of the session, its LLM summariser at a port nothing listens on."""
    settings = llm_settings(f"http://127.0.0.1:{closed_port()}/v1")
    return CtxtopApp(session_copy(tmp_path), settings=settings, clock=frozen_clock)


async def preview_with_llm(pilot: Pilot[None], screen: CompactScreen) -> None:
    """The LLM summariser chosen, and its preview shown."""
    await wait_until(pilot, lambda: screen.outcome is not None)
    screen.query_one("#compact-summarizer", Select).value = "llm"
    await wait_until(
        pilot,
        lambda: (
            screen.outcome is not None
            and screen.outcome.preview.details.summarizer_requested == "llm"
        ),
    )


async def open_panel(pilot: Pilot[None], app: CtxtopApp) -> CompactScreen:
    await wait_until(pilot, lambda: app.view is not None and app.view.analysis is not None)
    await pilot.press("c")
    screen = app.screen
    assert isinstance(screen, CompactScreen)
    return screen


@synchronous
async def test_preview_then_the_fork_and_its_event(tmp_path: Path) -> None:
    session = session_copy(tmp_path)
    digest = hashlib.sha256(session.read_bytes()).hexdigest()
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_panel(pilot, app)
        await wait_until(pilot, lambda: screen.outcome is not None)
        assert summary(screen).startswith("1. Conversation overview")
        outcome = screen.outcome
        assert outcome is not None
        before, after = outcome.preview.tokens_before, outcome.preview.tokens_after
        assert before > after
        shown = figures(screen)
        # The whole context, the gauge's figure, less the saving; the log's part below it.
        gauge = app.view.gauge  # type: ignore[union-attr]
        whole, mark = gauge.tokens, fmt.mark(gauge.source)  # with the gauge's provenance mark
        assert outcome.preview.context.before == whole
        whole_after = fmt.tokens(whole - (before - after))
        assert f"whole context {fmt.tokens(whole)}{mark} -> {whole_after}{mark}" in shown
        # Counted with the session's tokenizer factor: calibrated (~).
        assert outcome.preview.tokens_source == "calibrated"
        assert f"of which in the log {fmt.tokens(before)}~ -> {fmt.tokens(after)}~" in shown
        assert "summary by structured" in shown
        # Which rounds of which turn go, in the panel's words (as ``ctxtop compact`` says).
        cut = str(screen.query_one("#compact-cut", Static).render())
        assert 'turn 1: "What have we changed so far? Keep it short."' in cut
        assert "kept verbatim (Bash;" in cut and "summarised (no tool calls;" in cut
        box = screen.query_one("#compact-cut-box")
        assert str(box.border_title) == "1 round summarised, 3 kept verbatim"
        assert "round: a model reply + its tool calls" in str(box.border_subtitle)
        assert (
            f"cache rewrite: {fmt.tokens(outcome.preview.cache.rewrite_tokens)}~ tokens once"
            in shown
        )
        assert "$" in shown  # the sample's model has prices
        assert not screen.query_one("#compact-write", Button).disabled

        await pilot.click("#compact-write")
        await wait_until(pilot, lambda: "fork written" in figures(screen))
        done = figures(screen)
        forks = [path for path in tmp_path.iterdir() if path != session]
        assert len(forks) == 1 and forks[0].name in done
        assert "resume with: " in done and "claude --resume" in done
        assert "undo with: ctxtop undo" in done
        assert hashlib.sha256(session.read_bytes()).hexdigest() == digest
        logged = action_log.read_actions()
        assert [a["kind"] for a in logged] == ["compact"] and logged[0]["fork"] == str(forks[0])

        await pilot.click("#compact-close")
        assert not isinstance(app.screen, CompactScreen)

        def in_event_log() -> bool:
            return any(
                text.startswith("ctxtop compact: ") and forks[0].name in text
                for text in event_texts(app)
            )

        await wait_until(pilot, in_event_log)


@synchronous
async def test_the_llm_summariser_failing_shows_why_and_the_structured_summary(
    tmp_path: Path,
) -> None:
    app = unreachable_llm_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_panel(pilot, app)
        await preview_with_llm(pilot, screen)
        shown = figures(screen)
        assert "connection refused" in shown and "used the structured summary instead" in shown
        assert "summary by structured" in shown
        assert summary(screen).startswith("1. Conversation overview")


@synchronous
async def test_the_fork_holds_the_llm_summary_that_was_shown(tmp_path: Path) -> None:
    session = session_copy(tmp_path)
    with SummaryServer("good") as server:
        app = CtxtopApp(session, settings=llm_settings(server.url + "/v1"), clock=frozen_clock)
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await open_panel(pilot, app)
            await wait_until(pilot, lambda: screen.outcome is not None)
            screen.query_one("#compact-summarizer", Select).value = "llm"
            await wait_until(
                pilot,
                lambda: (
                    screen.outcome is not None
                    and screen.outcome.preview.details.summarizer == "llm"
                ),
            )
            assert "MARKER-FROM-THE-MODEL" in summary(screen)
            assert "summary by llm" in figures(screen)
            await pilot.click("#compact-write")
            await wait_until(pilot, lambda: "fork written" in figures(screen))
        assert len(server.requests) == 1  # the fork was written without asking again
    fork = next(path for path in tmp_path.iterdir() if path != session)
    assert "MARKER-FROM-THE-MODEL" in fork.read_text()


@synchronous
async def test_escape_stops_waiting_for_a_slow_llm(tmp_path: Path) -> None:
    session = session_copy(tmp_path)
    with SummaryServer("slow", delay=60) as server:
        app = CtxtopApp(session, settings=llm_settings(server.url + "/v1"), clock=frozen_clock)
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await open_panel(pilot, app)
            await wait_until(pilot, lambda: screen.outcome is not None)
            screen.query_one("#compact-summarizer", Select).value = "llm"
            await wait_until(pilot, lambda: "esc: stop waiting" in figures(screen))
            await wait_until(pilot, lambda: len(server.requests) == 1)
            await pilot.press("escape")
            await wait_until(
                pilot,
                lambda: (
                    screen.outcome is not None
                    and screen.outcome.preview.details.summarizer_requested == "llm"
                ),
            )
            assert app.screen is screen  # still open: the first escape only stops waiting
            assert "cancelled" in figures(screen)
            assert "summary by structured" in figures(screen)
            await pilot.press("escape")
            assert app.screen is not screen


@synchronous
async def test_help_and_palette_name_the_compaction_panel(tmp_path: Path) -> None:
    app = CtxtopApp(session_copy(tmp_path), clock=frozen_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.view is not None)
        await pilot.press("question_mark")
        help_text = str(app.screen.query_one(Static).render())
        assert "  c         Compact: summarise old rounds" in help_text
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert "Compact: summarise old rounds" in titles


@synchronous
async def test_at_80x24_the_buttons_stay_on_screen_below_the_summary(tmp_path: Path) -> None:
    app = CtxtopApp(session_copy(tmp_path), clock=frozen_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_panel(pilot, app)
        await wait_until(pilot, lambda: screen.outcome is not None)
        await pilot.pause()
        box = screen.query_one("#compact-summary-box")
        assert box.max_scroll_y > 0  # the summary is longer than its box: it scrolls
        # The strategies table keeps a few lines above the summary and scrolls the rest.
        strategies = screen.query_one("#compact-strategies-box")
        assert strategies.region.height >= 3 and strategies.region.bottom <= box.region.y
        assert strategies.max_scroll_y > 0
        # The rounds box keeps two lines and scrolls the rest (this sample has four).
        cut = screen.query_one("#compact-cut-box")
        assert cut.region.height == 4 and cut.max_scroll_y > 0
        for button in ("#compact-write", "#compact-close"):
            region = screen.query_one(button).region
            assert region.height > 0 and region.bottom <= 24 and region.y > box.region.bottom - 1


@synchronous
async def test_at_80x24_a_warning_scrolls_the_panel_and_the_buttons_stay_in_view(
    tmp_path: Path,
) -> None:
    """Issue 27 item 4: a warning's lines pushed the buttons below the screen, where Tab and
    Enter still reached the invisible Write fork."""
    app = unreachable_llm_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_panel(pilot, app)
        await preview_with_llm(pilot, screen)
        assert screen.outcome is not None and screen.outcome.warnings
        await pilot.pause()
        rows = screen_rows(app)
        assert any("Write fork" in row and "Close" in row for row in rows[-5:]), rows
        # Tab by Tab to the button: each focus is in view (the body scrolls to it).
        write = screen.query_one("#compact-write", Button)
        body = screen.query_one(".panel-body")
        for _ in range(12):
            await pilot.press("tab")
            await pilot.pause()
            focused = screen.focused
            assert focused is not None
            view = body.region if body in focused.ancestors else screen.region
            assert view.contains_region(focused.region), (focused, focused.region, view)
            if focused is write:
                break
        assert screen.focused is write
        assert any("Write fork" in row for row in screen_rows(app))
        # The body scrolls: the warning above the boxes can be brought back into view.
        assert body.max_scroll_y > 0
        body.scroll_home(animate=False)
        await pilot.pause()
        assert any("warning: LLM summary failed" in row for row in screen_rows(app))


def strategy_lines(screen: CompactScreen) -> list[str]:
    """The strategies table as drawn on screen, one line a row (the header first)."""
    table = screen.query_one("#compact-strategies", Static)
    strips = table.render_lines(Region(0, 0, table.size.width, table.size.height))
    return [strip.text.rstrip() for strip in strips if strip.text.strip()]


@synchronous
async def test_the_strategies_table_gives_what_ctxtop_compact_json_simulates(
    tmp_path: Path,
) -> None:
    session = session_copy(tmp_path)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["compact", str(session), "--dry-run", "--json"]) == 0
    policies = json.loads(printed.getvalue())["policies"]
    fill = policies["fill_tokens"]
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_panel(pilot, app)
        await wait_until(pilot, lambda: screen.strategies is not None)
        await pilot.pause()  # the table laid out at its new height before it is read
        assert app.view is not None and app.view.analysis is not None
        growth = app.view.analysis.forecast.growth_per_request
        assert growth is not None and growth > 0  # the sample grows: distances in requests
        rows = screen.strategies
        assert rows is not None
        names = [entry["strategy"] for entry in policies["strategies"]]
        assert [row["strategy"] for row in rows] == names
        assert {"copilot", "codecompanion-compaction", "claude-code", "codex"} <= set(names)
        lines = strategy_lines(screen)
        assert lines[0].split() == ["strategy", "fires", "at", "from", "now", "does"]
        assert len(lines) == 1 + len(names)
        for line, row, entry in zip(lines[1:], rows, policies["strategies"], strict=True):
            at = entry["at_tokens"]
            assert row["at_tokens"] == at and row["does"] == entry["does"]
            assert line.startswith(row["label"])
            assert f"{fmt.tokens(at)} {entry['at_fraction'] * 100:.0f} %" in line
            away = max(at - fill, 0)
            assert row["tokens_away"] == away and fmt.tokens(away) in line
            requests = away / growth
            assert f"~{requests:,.0f} req" in line or f"~{requests:.1f} req" in line
            assert line.rstrip().endswith(entry["does"])
        # The sample's compaction saves under 10,000 tokens: CodeCompanion would skip it.
        saved = json.loads(printed.getvalue())
        assert saved["tokens_before"] - saved["tokens_after"] < 10_000
        skipped = lines[1 + names.index("codecompanion-compaction")]
        assert "skip: saves < 10k" in skipped
        subtitle = str(screen.query_one("#compact-strategies-box").border_subtitle)
        window = fmt.tokens(policies["window"])
        assert subtitle == f"whole context now {fmt.tokens(fill)} of {window}"


@synchronous
async def test_write_is_off_for_a_compaction_that_is_not_smaller(tmp_path: Path) -> None:
    """The panel said "not smaller" as a warning and wrote the fork on Write fork; now the
    button is off and the panel says why, as the edit panel does for nothing to clear."""
    codex = sorted((ROOT / "sample_sessions/codex").rglob("rollout-*.jsonl"))[0]
    session = session_copy(tmp_path, codex)
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_panel(pilot, app)
        await wait_until(pilot, lambda: screen.outcome is not None)
        assert "nothing to compact: the compacted session would not be smaller" in figures(screen)
        assert screen.query_one("#compact-write", Button).disabled
        await pilot.click("#compact-write")
        await pilot.pause()
    assert sorted(tmp_path.iterdir()) == [session] and action_log.read_actions() == []


@synchronous
async def test_the_sessions_own_agent_compacts_where_the_gauge_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Codex sample's row in the strategies table is the gauge's ``A`` (244,800: the window
    Codex logged is the effective one), not Codex's rule applied again (232,560)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    codex = next((ROOT / "sample_sessions/codex").rglob("rollout-2026-11-23T03-15-46-*.jsonl"))
    app = CtxtopApp(session_copy(tmp_path, codex), clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_panel(pilot, app)
        await wait_until(pilot, lambda: screen.strategies is not None)
        assert app.view is not None and screen.strategies is not None
        rows = screen.strategies
        own = {row["strategy"]: row for row in rows}["codex"]
        assert own["at_tokens"] == app.view.gauge.autocompact_at == 244_800
        # The table laid out at its new height before it is read.
        await wait_until(pilot, lambda: len(strategy_lines(screen)) == 1 + len(rows))
        line = strategy_lines(screen)[1 + rows.index(own)]
        assert line.startswith("Codex") and f"{fmt.tokens(244_800)} " in line

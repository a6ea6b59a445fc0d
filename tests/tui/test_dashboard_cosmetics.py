"""Issue 27 item 11: figures drawn as what they are: no bar for a negative difference, no
"0 %" for a share that is not nothing, one kind of figure per column, a sparkline from zero."""

from __future__ import annotations

import shutil
from pathlib import Path

from dashboard_support import frozen_clock, screen_lines, synchronous, wait_until
from textual.widgets import Static

from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.screens.edit_panel import EditScreen

ROOT = Path(__file__).resolve().parents[2]
# ctxtop's estimates of this session's parts add up to 1.5k more than the agent's count.
ONE_TURN = ROOT / "tests/data/one_turn/claude-code/b6a9545e-0d9d-4547-a30b-76c3b71a6ebd.jsonl"


def copied(source: Path, tmp_path: Path) -> Path:
    target = tmp_path / source.name
    shutil.copyfile(source, target)
    return target


@synchronous
async def test_a_negative_tokenizer_difference_draws_no_bar(tmp_path: Path) -> None:
    app = CtxtopApp(copied(ONE_TURN, tmp_path), clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.view is not None and app.view.analysis is not None)
        await pilot.pause()
        assert app.view is not None and app.view.analysis is not None
        assert app.view.analysis.residual_tokens < -1000
        rows = [row for row in screen_lines(app.sections) if "tokenizer difference" in row]
        assert len(rows) == 1 and "−1.5k" in rows[0], rows
        assert "█" not in rows[0], rows


# TodoWrite's results are 84 of this session's 73k tool-result tokens (0.1 %).
CALC_LARGE = ROOT / (
    "sample_sessions/claude-code/projects/-home-dev-projects-calc-large/"
    "5fd531c1-30e6-4b1b-93ee-f38e6d1dafe6.jsonl"
)


@synchronous
async def test_a_share_that_rounds_to_nothing_reads_less_than_one_percent(tmp_path: Path) -> None:
    app = CtxtopApp(copied(CALC_LARGE, tmp_path), clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.tools.row_count > 0)
        row = [str(cell) for cell in app.tools.get_row("TodoWrite")]
        assert row[2:] == ["84≈", "<1 %"], row


@synchronous
async def test_the_sparkline_starts_at_zero(tmp_path: Path) -> None:
    """The sample's first request holds 19.5k, its last 45.5k: the first bar is three eighths
    of the last, not nothing (a sparkline from the lowest value)."""
    app = CtxtopApp(copied(ONE_TURN, tmp_path), clock=frozen_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.view is not None and len(app.view.history) > 1)
        await pilot.pause()
        history = app.view.history  # type: ignore[union-attr]
        assert (history[0], max(history)) == (19485, 45475)
        (line,) = screen_lines(app.history.sparkline)
        assert line.strip()[0] == "▃" and line.strip()[-1] == "█", line


# Codex 0.169 against a scripted model that reports 3,000 input tokens a request, while the log
# holds 5.1k by the tokenizer (4.4k of them the base instructions).
CODEX = ROOT / (
    "tests/sessions/data/real/codex/generated-cli-0.169.0/sessions/2026/11/22/"
    "rollout-2026-11-22T14-09-59-01a20397-a65f-7be0-a82b-63e59b296bcb.jsonl"
)


@synchronous
async def test_the_panels_log_part_is_never_more_than_the_whole(tmp_path: Path) -> None:
    """The edit panel said "whole context 3.1k" and "of which in the log 5.1k≈" with nothing
    to reconcile them; the sections panel gives the difference as a signed row."""
    app = CtxtopApp(copied(CODEX, tmp_path), clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.view is not None and app.view.analysis is not None)
        await pilot.pause()
        rows = [row for row in screen_lines(app.sections) if "tokenizer difference" in row]
        assert len(rows) == 1 and "−2.1k*" in rows[0], rows
        await pilot.press("e")
        screen = app.screen
        assert isinstance(screen, EditScreen)
        await wait_until(pilot, lambda: screen.outcome is not None)
        await pilot.pause()
        shown = str(screen.query_one("#edit-preview", Static).render())
        assert "whole context 3.1k -> 3.1k" in shown, shown
        assert "of which in the log 5.1k≈ -> 5.1k≈, tokenizer difference −2.1k*" in shown, shown

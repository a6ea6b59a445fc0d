"""One value per quantity, whichever view shows it (issue 25, point 8): the dashboard (driven
through the pilot), ``ctxtop report`` (text and JSON), the status line and the edit panel, on
the same session, the demo sample (``ctxtop live``'s figure: tests/proxy/test_live_status.py).

- a compaction's "after": the whole context the next request sends (the agent's count of the
  new history plus the system prompt and tools), decided once: the same in every frame of the
  dashboard from the compaction on, and in the report (the report said 2,771, the messages
  only; the dashboard 22.1k, drifting 22.0k -> 22.2k -> 22.1k as requests came in);
- what the window keeps free: the gauge's reserved part (window less the auto-compact point)
  is the sections' two rows, the auto-compaction buffer and the output reserve (the reserve
  had no row: 13.0k in the sections, 33k under the gauge), and the sections add up to the
  window;
- what the log does not show: the edit panel's figure is the categories panel's "not in the
  log" row, named so (it was called "system prompt + tools", 19.0k beside the sections'
  19.3k system prompt).
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from dashboard_support import (
    COMPACTION_LINE,
    append_each_line,
    frozen_clock,
    synchronous,
    wait_until,
    write_lines,
)
from textual.widgets import Static

from ctxtop.engine.cli.main import main
from ctxtop.engine.live.demo import demo_lines
from ctxtop.engine.models.registry import lookup
from ctxtop.tui import format as fmt
from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.screens.edit_panel import EditScreen


def _report(path: Path, capsys: pytest.CaptureFixture[str], *options: str) -> Any:
    capsys.readouterr()
    assert main(["report", str(path), *options]) == 0
    out = capsys.readouterr().out
    return json.loads(out) if "--json" in options else out


def _statusline(capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["statusline"]) == 0
    return capsys.readouterr().out


def _analysed(app: CtxtopApp) -> bool:
    return app.view is not None and app.view.analysis is not None


def _logged_post_tokens() -> int:
    """The agent's own "after" of the demo's /compact, read from its boundary line."""
    record = json.loads(demo_lines()[COMPACTION_LINE - 1])
    assert record["subtype"] == "compact_boundary"
    return int(record["compactMetadata"]["postTokens"])


def _first_request_after_compaction() -> int:
    """The line of the first response with usage after the demo's /compact."""
    for number, raw in enumerate(demo_lines()[COMPACTION_LINE:], COMPACTION_LINE + 1):
        record = json.loads(raw)
        message = record.get("message") if record.get("type") == "assistant" else None
        if isinstance(message, dict) and message.get("usage"):
            return number
    raise AssertionError("no request after the compaction")


@synchronous
async def test_a_compactions_after_is_the_reports_in_every_frame_and_fixed_once_requested(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    session = tmp_path / "session.jsonl"
    write_lines(session, COMPACTION_LINE - 1)
    app = CtxtopApp(session, clock=frozen_clock)
    frames: list[tuple[int, str]] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: _analysed(app))
        async for lines in append_each_line(pilot, app, session, COMPACTION_LINE - 1):
            (event,) = [e.text for e in app.view.events if e.kind == "compaction"]
            frames.append((lines, event))

    post = _logged_post_tokens()
    requested = _first_request_after_compaction()
    cut = tmp_path / "cut.jsonl"
    for lines, event in frames:
        cut.write_bytes(b"".join(demo_lines()[:lines]))
        report = _report(cut, capsys, "--json")
        (compaction,) = report["compactions"]
        after = compaction["after_tokens"]
        # The agent's figure counts the messages only: the system prompt and tools added, in
        # the tokenizer's count (the calibrated section moves with each request's factor), in
        # the dashboard's event as in the report.
        assert compaction["post_tokens"] == post
        assert after == post + report["analysis"]["system_counted"]
        # Marked inferred: the agent's figure plus ctxtop's system prompt and tools.
        assert event.endswith(f" -> *{fmt.tokens(after)}"), (lines, event, after)
        if lines == COMPACTION_LINE + 1:  # its boundary and summary: the gauge's figure
            assert report["context_tokens"]["source"] == "compaction"
            assert report["context_tokens"]["value"] == after
            status = {"transcript_path": str(cut), "model": {"id": report["model"]}}
            stdin = io.TextIOWrapper(io.BytesIO(json.dumps(status).encode()))
            monkeypatch.setattr(sys, "stdin", stdin)
            shown = f"ctx {round(report['fill_percent'])}% {round(after / 1000)}k/"
            assert _statusline(capsys).startswith(shown)
    assert f" -> {after:,} ({post:,} logged" in _report(cut, capsys)
    # Once a request followed it, the figure is fixed (it drifted 22.0k -> 22.2k -> 22.1k).
    assert len({event for lines, event in frames if lines >= requested}) == 1


@synchronous
async def test_what_the_window_keeps_free_is_one_figure_under_the_gauge_and_in_the_sections(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = tmp_path / "session.jsonl"
    write_lines(session, len(demo_lines()))
    report = _report(session, capsys, "--json")
    analysis = report["analysis"]
    sections = {s["name"]: s["tokens"] for s in analysis["sections"]}
    window = report["context_window"]
    # Claude Code's rules: the answer's reserve is the model's output, at most 20,000; it
    # compacts 13,000 below the window less that reserve.
    assert sections["output_reserve"] == min(lookup(report["model"]).max_output, 20_000)
    assert sections["output_reserve"] == window - analysis["budget"]
    assert sections["autocompact_buffer"] == analysis["budget"] - report["autocompact_at"]
    # Every row with the residual: the whole window.
    assert sum(sections.values()) + analysis["residual_tokens"] == window
    text = _report(session, capsys)
    (row,) = [line for line in text.splitlines() if "kept free for model output" in line]
    assert row.split()[-4] == f"{sections['output_reserve']:,}"

    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: _analysed(app))
        assert app.view is not None
        gauge = app.view.shown_gauge
        assert gauge.reserved == sections["output_reserve"] + sections["autocompact_buffer"]
        panel = str(app.sections.render())
        assert f"{fmt.tokens(sections['output_reserve'])}*" in panel
        assert f"{fmt.tokens(sections['autocompact_buffer'])}*" in panel


@synchronous
async def test_the_edit_panel_names_what_the_log_does_not_show_as_the_categories_do(
    tmp_path: Path,
) -> None:
    session = tmp_path / "session.jsonl"
    write_lines(session, len(demo_lines()))
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: _analysed(app))
        assert app.view is not None
        rows = {row.name: row.tokens for row in app.view.categories}
        await pilot.press("e")
        panel = app.screen
        assert isinstance(panel, EditScreen)
        await wait_until(pilot, lambda: panel.outcome is not None)
        assert panel.outcome is not None
        outside = panel.outcome.preview.context.outside_log
        shown = str(panel.query_one("#edit-preview", Static).render())
    assert outside == rows["not in the log"]
    assert f"not in the log {fmt.tokens(outside)}*" in shown
    assert "system prompt" not in shown  # the sections' figure is the only one named so

"""A model whose window no source knows is shown as such on the dashboard (header and gauge), in
``ctxtop report`` and in its JSON, never as a plain 200k model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from dashboard_support import frozen_clock, screen_lines, synchronous, wait_until

from ctxtop.engine.live.demo import demo_lines
from ctxtop.tui.app import CtxtopApp

NOTE = "window unknown, assuming 200k"


def session_with_model(tmp_path: Path, model: str) -> Path:
    """The demo session as a model of that name wrote it."""
    known = {json.loads(line).get("message", {}).get("model") for line in demo_lines()}
    known.discard(None)
    text = b"".join(demo_lines()).decode()
    for name in known:
        text = text.replace(f'"model":"{name}"', f'"model":"{model}"').replace(
            f'"model": "{name}"', f'"model": "{model}"'
        )
    session = tmp_path / "session.jsonl"
    session.write_text(text)
    return session


def report(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxtop", "report", *args],
        capture_output=True,
        text=True,
        check=True,
    )


def test_report_says_the_window_is_unknown(tmp_path: Path) -> None:
    session = session_with_model(tmp_path, "acme-llm-7")
    got = json.loads(report("--json", str(session)).stdout)
    assert got["model"] == "acme-llm-7"
    assert (got["context_window_source"], got["context_window_note"]) == ("assumed", NOTE)
    assert f"window 200,000 ({NOTE})" in report(str(session)).stdout


def test_report_of_a_known_model_has_no_note(tmp_path: Path) -> None:
    session = session_with_model(tmp_path, "claude-opus-5-5")
    got = json.loads(report("--json", str(session)).stdout)
    assert (got["context_window"], got["context_window_source"]) == (1_000_000, "dataset")
    assert got["context_window_note"] is None


@synchronous
async def test_dashboard_header_and_gauge_say_the_window_is_unknown(tmp_path: Path) -> None:
    session = session_with_model(tmp_path, "acme-llm-7")
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: app.view is not None)
        await pilot.pause()
        assert NOTE in str(app.header.render())
        assert any(NOTE in line for line in screen_lines(app.gauge))

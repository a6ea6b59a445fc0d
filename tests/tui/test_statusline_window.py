"""The status line's window: the one Claude Code states in its status JSON wins over any table,
the auto-compact distance is measured against it, and a window nobody knows says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ctxtop.engine.tokens.short import short_tokens

SAMPLE = (
    Path(__file__).resolve().parents[2]
    / "sample_sessions/claude-code/projects/-home-dev-demo-project"
    / "b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl"
)
RESERVE_AND_BUFFER = 20_000 + 13_000  # Claude Code: min(max output, 20k) + 13k


def ctxtop(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "DISABLE_"))}
    env["HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "ctxtop", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
    )


def session_of(tmp_path: Path, model: str) -> Path:
    path = tmp_path / f"{model}.jsonl"
    path.write_text(SAMPLE.read_text().replace('"model":"claude-sonnet-4-5"', f'"model":"{model}"'))
    return path


def tokens_of(home: Path, session: Path) -> int:
    report: dict[str, Any] = json.loads(ctxtop(home, "report", "--json", str(session)).stdout)
    value: int = report["context_tokens"]["value"]
    return value


def status(home: Path, session: Path, window: int | None = None) -> str:
    data: dict[str, Any] = {"transcript_path": str(session), "model": {"id": "x"}}
    if window is not None:
        data["context_window"] = {"context_window_size": window, "current_usage": None}
    done = ctxtop(home, "statusline", stdin=json.dumps(data))
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_window_claude_code_states_wins_and_sets_the_auto_compact_distance(
    tmp_path: Path,
) -> None:
    session = session_of(tmp_path, "acme-llm-7")  # a model no table knows
    tokens = tokens_of(tmp_path, session)
    line = status(tmp_path, session, window=1_000_000)
    assert line.startswith(f"ctx {round(100 * tokens / 1_000_000)}% ")
    assert f"/{short_tokens(1_000_000, digits=0)} " in line
    left = (1_000_000 - RESERVE_AND_BUFFER - tokens) / 1000
    assert f"{left:.0f}k to auto-compact" in line
    assert "window unknown" not in line


def test_a_window_nobody_knows_says_so(tmp_path: Path) -> None:
    session = session_of(tmp_path, "acme-llm-7")
    tokens = tokens_of(tmp_path, session)
    line = status(tmp_path, session)
    assert line.startswith(f"ctx {round(100 * tokens / 200_000)}% ")
    assert "window unknown, assuming 200k" in line


def test_claude_codes_default_model_fills_a_1m_window(tmp_path: Path) -> None:
    """Claude Code 2.1.332's default model: its 1M window from the dataset, not 200k."""
    session = session_of(tmp_path, "claude-opus-5-5")
    tokens = tokens_of(tmp_path, session)
    line = status(tmp_path, session)
    assert line.startswith(f"ctx {round(100 * tokens / 1_000_000)}% ")
    left = (1_000_000 - RESERVE_AND_BUFFER - tokens) / 1000
    assert f"{left:.0f}k to auto-compact" in line
    assert "window unknown" not in line

"""A home directory laid out as each agent's, holding the bundled sample sessions (for the
sessions table's tests): ``~/.claude``, ``~/.codex``, ``~/.gemini``, ``~/.copilot``."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

SAMPLES = Path(__file__).resolve().parents[1] / "sample_sessions"
AGENT_DIRS = {
    "claude-code": ("claude-code", ".claude"),
    "codex": ("codex", ".codex"),
    "gemini-cli": ("gemini-cli/.gemini", ".gemini"),
    "copilot-cli": ("copilot-cli", ".copilot"),
}
HOME_VARIABLES = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "COPILOT_HOME")
# Where a test writes a session of its own (the demo sample's lines): a new Claude Code project.
NEW_SESSION = Path(".claude/projects/-home-dev-live/0b5d6b2c-6a65-4f0e-9d1e-5f0e6c3a9a11.jsonl")


def sample_home(root: Path, monkeypatch: pytest.MonkeyPatch, written: float | None = None) -> Path:
    """Every agent's samples under ``root`` as the home directory (``written``: every file's
    modification time, else now); HOME points there and the agents' own variables are unset."""
    for source, target in AGENT_DIRS.values():
        shutil.copytree(SAMPLES / source, root / target, dirs_exist_ok=True)
    for path in root.rglob("PROVENANCE.md"):
        path.unlink()
    written = time.time() if written is None else written  # copies keep the samples' times
    for path in root.rglob("*"):
        os.utime(path, (written, written))
    monkeypatch.setenv("HOME", str(root))
    for name in HOME_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return root


def report_json(path: Path) -> dict[str, Any]:
    """What ``ctxtop report --json`` prints for ``path`` (run in-process: a running Textual
    app captures ``sys.stdout``, so the output is taken directly)."""
    from ctxtop.engine.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", str(path), "--json"]) == 0
    return dict(json.loads(out.getvalue()))


def cost_of(report: dict[str, Any]) -> float | None:
    """The cost so far as the table takes it from the report's analysis."""
    cache = report["analysis"]["cache"]
    return cache["logged_cost"] if cache["logged_cost"] is not None else cache["cost"]

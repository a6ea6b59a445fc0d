"""The logs with compactions that the inspector and restore tests read."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Claude Code 2.1.332: /compact (calc-main), a mid-turn auto-compaction (calc-autocompact).
CLAUDE_2_1_332 = (
    ROOT / "sample_sessions/claude-code/projects/-home-dev-projects-calc-main/"
    "ff656323-5d3c-47d4-a01f-e8bc70c19faf.jsonl"
)
AUTOCOMPACT_2_1_332 = next(
    (Path(__file__).parent / "data" / "calc-autocompact-2.1.332").glob("*.jsonl")
)
# Claude Code 2.1.330, the demo's sample: one /compact.
CLAUDE_DEMO = (
    ROOT / "sample_sessions/claude-code/projects/-home-dev-demo-project/"
    "b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl"
)
THRASH = (
    ROOT / "tests/sessions/data/generated/claude-code/calc-autocompact/"
    "cab977aa-a7d9-408c-a2f0-9dcf156ac8c1.jsonl"
)
CODEX = next((ROOT / "sample_sessions/codex/sessions").rglob("rollout-*01a21f76-*.jsonl"))
GEMINI = next((ROOT / "tests/sessions/data/generated/gemini-cli").rglob("session-*.jsonl"))

# The microcompaction log in Claude Code's shape (tests/analysis/microcompact_log.py).
sys.path.insert(0, str(ROOT / "tests" / "analysis"))
from microcompact_log import write_session  # noqa: E402

__all__ = [
    "AUTOCOMPACT_2_1_332",
    "CLAUDE_2_1_332",
    "CLAUDE_DEMO",
    "CODEX",
    "GEMINI",
    "ROOT",
    "THRASH",
    "write_session",
]

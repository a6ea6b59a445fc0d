"""Gemini CLI, as ctxtop knows it (see engine/agents/base.py)."""

from __future__ import annotations

from pathlib import Path

from ctxtop.engine.agents.base import Agent, ProxyUse, SessionFiles
from ctxtop.engine.agents.gemini_cli.reader import GeminiCliAdapter


def _converted(path: Path) -> bool:
    """A legacy ``.json`` session a resume already converted to ``.jsonl`` (that one is read)."""
    return path.suffix == ".json" and path.with_suffix(".jsonl").exists()


PLUGIN = Agent(
    GeminiCliAdapter,
    # GEMINI_CLI_HOME stands for the home directory, .gemini lives below it.
    sessions=SessionFiles(
        "GEMINI_CLI_HOME",
        "~",
        (".gemini/tmp/*/chats/session-*.jsonl", ".gemini/tmp/*/chats/session-*.json"),
        _converted,
    ),
    # 0.61 sends no session id.
    proxy=ProxyUse("Gemini CLI", "GOOGLE_GEMINI_BASE_URL={url} gemini", by_opening=True),
)

"""GitHub Copilot CLI, as ctxtop knows it (see engine/agents/base.py)."""

from __future__ import annotations

from ctxtop.engine.agents.base import Agent, SessionFiles
from ctxtop.engine.agents.copilot_cli.reader import CopilotCliAdapter

PLUGIN = Agent(
    CopilotCliAdapter,
    # The second pattern: the legacy flat layout.
    sessions=SessionFiles(
        "COPILOT_HOME", "~/.copilot", ("session-state/*/events.jsonl", "session-state/*.jsonl")
    ),
)

"""Claude Code, as ctxtop knows it (see engine/agents/base.py)."""

from __future__ import annotations

from pathlib import Path

from engine.agents.base import Agent, ProxyUse, SessionFiles
from engine.agents.claude_code.reader import ClaudeCodeAdapter
from engine.agents.claude_code.rules import RULE


def _subagent_file(path: Path) -> bool:
    """Claude Code 2.0.x keeps sub-agents' files beside the sessions; they are read with their
    parent."""
    return path.name.startswith("agent-")


PLUGIN = Agent(
    ClaudeCodeAdapter,
    "engine.agents.claude_code.writer:ClaudeCodeWriter",
    "engine.agents.claude_code.source:ClaudeCodeSource",
    RULE,
    sessions=SessionFiles(
        "CLAUDE_CONFIG_DIR", "~/.claude", ("projects/*/*.jsonl",), _subagent_file
    ),
    fork_name=r"{id}\.jsonl",
    summary_openings=("This session is being continued",),
    proxy=ProxyUse(
        "Claude Code",
        "ANTHROPIC_BASE_URL={url} claude",
        session_headers=("x-claude-code-session-id",),
    ),
)

"""The registry of agent plugins, in detection-tie order.

To add an agent: make a package ``engine/agents/<agent>/`` with its reader (an ``Adapter``
subclass, see ``engine/sessions/adapter.py`` for the contract: detection, records into the
session model, discovery of its files, its auto-compact point, the name of its layout profile)
and, if ctxtop can write its format, a fork writer (``engine/editing/writer.py``) and a compaction
source (``engine/compaction/source.py``), named as ``"module:Class"`` (imported when first used),
and, if the agent compacts on its own, its strategy (``rules.py``, an ``AutoCompactRule``); then
add an ``Agent`` to ``AGENTS`` below and a sample session to ``tests/agents/test_conformance.py``.
Keep the generic OpenAI-messages format last.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.agents.base import Agent
from engine.agents.claude_code.reader import ClaudeCodeAdapter
from engine.agents.claude_code.rules import RULE as CLAUDE_CODE_RULE
from engine.agents.codex.reader import CodexAdapter
from engine.agents.codex.rules import RULE as CODEX_RULE
from engine.agents.copilot_cli.reader import CopilotCliAdapter
from engine.agents.gemini_cli.reader import GeminiCliAdapter
from engine.agents.openai_messages.reader import OpenAIMessagesAdapter
from engine.agents.pi.reader import PiAdapter
from engine.agents.pi.rules import RULE as PI_RULE
from engine.agents.qwen_code.reader import QwenCodeAdapter
from engine.agents.qwen_code.rules import RULE as QWEN_CODE_RULE
from engine.sessions.adapter import NOT_MINE, Adapter

AGENTS: dict[str, Agent] = {
    agent.name: agent
    for agent in (
        Agent(
            ClaudeCodeAdapter,
            "engine.agents.claude_code.writer:ClaudeCodeWriter",
            "engine.agents.claude_code.source:ClaudeCodeSource",
            CLAUDE_CODE_RULE,
        ),
        Agent(
            CodexAdapter,
            "engine.agents.codex.writer:CodexWriter",
            "engine.agents.codex.source:CodexSource",
            CODEX_RULE,
        ),
        Agent(GeminiCliAdapter),
        Agent(CopilotCliAdapter),
        Agent(PiAdapter, "engine.agents.pi.writer:PiWriter", auto_compact=PI_RULE),
        Agent(
            QwenCodeAdapter,
            "engine.agents.qwen_code.writer:QwenCodeWriter",
            auto_compact=QWEN_CODE_RULE,
        ),
        Agent(  # keep last
            OpenAIMessagesAdapter,
            "engine.agents.openai_messages.writer:OpenAIMessagesWriter",
            "engine.agents.openai_messages.source:OpenAIMessagesSource",
        ),
    )
}
ADAPTERS: list[type[Adapter]] = [agent.reader for agent in AGENTS.values()]


def by_agent(agent: str) -> type[Adapter]:
    """The adapter class for an agent name such as ``claude-code``."""
    for cls in ADAPTERS:
        if cls.agent == agent:
            return cls
    raise KeyError(agent)


def profile_of(agent: str) -> str:
    """The layout profile of an agent's prompts (the default one for a name not registered)."""
    known = AGENTS.get(agent)
    return known.profile if known is not None else Adapter.profile


def detect(head: Sequence[Any]) -> type[Adapter] | None:
    """The adapter with the best detection score for these first records (None if no one)."""
    best: type[Adapter] | None = None
    best_score = NOT_MINE
    for cls in ADAPTERS:
        try:
            score = cls.detect(head)
        except Exception:  # a detector must not take the reader down
            score = NOT_MINE
        if score > best_score:
            best, best_score = cls, score
    return best


__all__ = ["ADAPTERS", "AGENTS", "Adapter", "Agent", "by_agent", "detect", "profile_of"]

"""The registry of session adapters, in detection-tie order.

To add an agent: write ``engine/sessions/adapters/<agent>.py`` with an ``Adapter`` subclass (see
``base.py`` for the contract) and append the class to ``ADAPTERS`` below. Keep the generic
``OpenAIMessagesAdapter`` last.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.sessions.adapters.base import NOT_MINE, Adapter
from engine.sessions.adapters.claude_code import ClaudeCodeAdapter
from engine.sessions.adapters.codex import CodexAdapter
from engine.sessions.adapters.copilot_cli import CopilotCliAdapter
from engine.sessions.adapters.gemini_cli import GeminiCliAdapter
from engine.sessions.adapters.openai_messages import OpenAIMessagesAdapter

ADAPTERS: list[type[Adapter]] = [
    ClaudeCodeAdapter,
    CodexAdapter,
    GeminiCliAdapter,
    CopilotCliAdapter,
]
ADAPTERS.append(OpenAIMessagesAdapter)  # the generic format: keep it last


def by_agent(agent: str) -> type[Adapter]:
    """The adapter class for an agent name such as ``claude-code``."""
    for cls in ADAPTERS:
        if cls.agent == agent:
            return cls
    raise KeyError(agent)


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


__all__ = ["ADAPTERS", "Adapter", "by_agent", "detect"]

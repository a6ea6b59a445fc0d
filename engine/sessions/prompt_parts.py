"""The system prompt and tool definitions of a session's requests, when its log holds them.

Most agents' logs hold only the conversation: the system prompt and the tools are then inferred
from the API's figures (engine/analysis/analyze.py). Some logs record the exact text sent
(Claude Code 2.1.330+: ``api-request-shape`` records, ``prompt_snapshot`` attachments); an
adapter then sets ``SessionState.prompt_parts`` and the analysis counts them with the tokenizer,
provenance ``logged``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.tokens.chat import tool_definitions_tokens


@dataclass(frozen=True, slots=True, eq=False)
class PromptParts:
    """What the agent's latest main request sent besides the messages, as its log records it.

    ``tools`` holds the definitions the model sees (JSON objects as sent); ``source`` names the
    record they were read from, ``line`` its line."""

    system: tuple[str, ...]
    tools: tuple[Any, ...]
    source: str
    line: int

    def tokens(self, count: Callable[[str], int]) -> int:
        """System blocks counted as texts, tool definitions by the chat rules (as ctxtop's proxy
        counts a request it forwards)."""
        return sum(count(text) for text in self.system) + tool_definitions_tokens(self.tools, count)

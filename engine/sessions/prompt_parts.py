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
from engine.tokens.encoding import Encoding


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


# The parts counted lately, by identity and encoding (a live session's every sample asks again;
# the parts change only when the agent's prompt does).
_COUNTED: dict[tuple[int, str], tuple[PromptParts, int]] = {}
_COUNTED_MAX = 64


def logged_tokens(parts: PromptParts | None, encoding: Encoding) -> int | None:
    """``parts`` counted with ``encoding`` (None: the log holds no prompt parts)."""
    if parts is None:
        return None
    key = (id(parts), encoding.name)
    known = _COUNTED.get(key)
    if known is None or known[0] is not parts:
        if len(_COUNTED) >= _COUNTED_MAX:
            _COUNTED.clear()
        known = _COUNTED[key] = (parts, parts.tokens(encoding.count))
    return known[1]

"""The system prompt and tool definitions of a session's requests, when its log holds them.

Most agents' logs hold only the conversation: the system prompt and the tools are then inferred
from the API's figures (engine/analysis/analyze.py). Some logs record the exact text sent
(Claude Code 2.1.330+: ``api-request-shape`` records, ``prompt_snapshot`` attachments); an
adapter then sets ``SessionState.prompt_parts`` and the analysis counts them with the tokenizer,
provenance ``logged``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ctxtop.engine.tokens.chat import tool_definitions_tokens
from ctxtop.engine.tokens.encoding import Encoding


@dataclass(frozen=True, slots=True, eq=False)
class PromptParts:
    """What the agent's latest main request sent besides the messages, as its log records it.

    ``tools`` holds the definitions the model sees (JSON objects as sent); ``source`` names the
    record they were read from, ``line`` its line."""

    system: tuple[str, ...]
    tools: tuple[Any, ...]
    source: str
    line: int
    # Their tokens by encoding, counted once (a live session's every sample asks again; the
    # parts change only when the agent's prompt does).
    counted: dict[str, int] = field(default_factory=dict, init=False, repr=False)

    def tokens(self, count: Callable[[str], int]) -> int:
        """System blocks counted as texts, tool definitions by the chat rules (as ctxtop's proxy
        counts a request it forwards)."""
        return sum(count(text) for text in self.system) + tool_definitions_tokens(self.tools, count)


def logged_tokens(parts: PromptParts | None, encoding: Encoding) -> int | None:
    """``parts`` counted with ``encoding`` (None: the log holds no prompt parts)."""
    if parts is None:
        return None
    known = parts.counted.get(encoding.name)
    if known is None:
        known = parts.counted[encoding.name] = parts.tokens(encoding.count)
    return known


@dataclass(frozen=True, slots=True)
class AgentCounts:
    """Sizes the agent itself logged (Copilot CLI's ``systemTokens``, ``toolDefinitionsTokens``,
    ``currentTokens``): its own count, not ctxtop's tokenizer's and not the API's usage, so
    shown as logged and never corrected by the session's tokenizer factor.

    ``outside_messages`` is what the log's messages do not show (the tool definitions, and the
    system prompt when no message of the context holds it); ``context`` the whole context as the
    agent counted it at ``line`` (None: not logged, or the context was rewritten since)."""

    outside_messages: int
    context: int | None
    line: int


@dataclass(frozen=True, slots=True)
class PromptShare:
    """One part of a prompt as the agent itself split it (VS Code's ``promptTokenDetails``):
    its share of the prompt in percent, by the agent's own count."""

    category: str
    label: str
    percent: float


@dataclass(frozen=True, slots=True)
class AgentPart:
    """A part of the last prompt as the agent split it: its share, and that share of the
    reported prompt in tokens (the report's and the dashboard's one figure)."""

    category: str
    label: str
    percent: float
    tokens: int


def agent_parts(shares: tuple[PromptShare, ...], prompt: int) -> tuple[AgentPart, ...]:
    """``shares`` of a prompt of ``prompt`` tokens, each as tokens too."""
    return tuple(
        AgentPart(share.category, share.label, share.percent, round(prompt * share.percent / 100))
        for share in shares
    )


@dataclass(frozen=True, slots=True)
class AgentShares:
    """The agent's own split of the prompt of the response ``response_key``."""

    response_key: str
    shares: tuple[PromptShare, ...]


@dataclass(frozen=True, slots=True)
class LoggedPrompt:
    """What the log says of the prompt besides its messages: ``tokens``, and whether ctxtop's
    tokenizer counted them from the logged text (``counted``, corrected by the session's factor
    like every tokenizer count) or the agent logged the figure itself (kept as it is)."""

    tokens: int
    counted: bool


def logged_prompt(
    parts: PromptParts | None, counts: AgentCounts | None, encoding: Encoding
) -> LoggedPrompt | None:
    """The logged text when the log holds it, else the agent's own figure (None: neither)."""
    tokens = logged_tokens(parts, encoding)
    if tokens is not None:
        return LoggedPrompt(tokens, counted=True)
    if counts is not None:
        return LoggedPrompt(counts.outside_messages, counted=False)
    return None

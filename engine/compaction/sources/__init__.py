"""Per-format sources: read a session's records as compaction items, write the compacted fork."""

from __future__ import annotations

from engine.compaction.sources.base import Source
from engine.compaction.sources.claude_code import ClaudeCodeSource
from engine.compaction.sources.codex import CodexSource
from engine.compaction.sources.openai_messages import OpenAIMessagesSource

SOURCES: dict[str, type[Source]] = {
    ClaudeCodeSource.agent: ClaudeCodeSource,
    CodexSource.agent: CodexSource,
    OpenAIMessagesSource.agent: OpenAIMessagesSource,
}

__all__ = ["SOURCES", "Source"]

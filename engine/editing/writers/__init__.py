"""Format writers: read an agent's raw session records, find tool uses, write an edited fork."""

from __future__ import annotations

from engine.editing.writers.base import Writer
from engine.editing.writers.claude_code import ClaudeCodeWriter
from engine.editing.writers.codex import CodexWriter
from engine.editing.writers.openai_messages import OpenAIMessagesWriter

WRITERS: dict[str, type[Writer]] = {
    ClaudeCodeWriter.agent: ClaudeCodeWriter,
    CodexWriter.agent: CodexWriter,
    OpenAIMessagesWriter.agent: OpenAIMessagesWriter,
}

__all__ = ["WRITERS", "Writer"]

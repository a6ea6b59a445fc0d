"""Claude Code JSONL transcripts: 1.0.x inline sidechains, 2.0.x agent files, 2.1.x subagents/."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.sessions.adapters.base import CERTAIN, LIKELY, NOT_MINE, Adapter

_CONVERSATION_TYPES = {"user", "assistant", "system", "attachment", "progress", "summary"}


class ClaudeCodeAdapter(Adapter):
    agent = "claude-code"
    label = "Claude Code"

    @classmethod
    def detect(cls, head: Sequence[Any]) -> int:
        score = NOT_MINE
        for record in head:
            if not isinstance(record, dict) or record.get("type") not in _CONVERSATION_TYPES:
                continue
            if "parentUuid" in record and "sessionId" in record:
                return CERTAIN
            if record.get("type") == "summary" and "leafUuid" in record:
                score = LIKELY
        return score

    def feed(self, record: Any, line: int) -> None:
        pass

"""The generic format: a JSON array or JSONL of OpenAI chat messages, optional ``usage`` each."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.sessions.adapters.base import GENERIC, NOT_MINE, Adapter

_ROLES = {"system", "developer", "user", "assistant", "tool"}


class OpenAIMessagesAdapter(Adapter):
    agent = "openai-messages"
    label = "OpenAI messages"

    @classmethod
    def detect(cls, head: Sequence[Any]) -> int:
        records = [r for r in head if isinstance(r, dict)]
        if records and all(r.get("role") in _ROLES for r in records):
            return GENERIC
        return NOT_MINE

    def feed(self, record: Any, line: int) -> None:
        pass

"""The context by kind of content, kept up to date incrementally for the live dashboard.

``context_breakdown`` of the report walks the whole context on every call, which is fine for one
report but not for every append to a long session. ``CategoryTotals`` remembers each counted
message's share and, on each update, only takes back the messages that are no longer on the
context (a rewind, a compaction) and counts the new ones; the last message is always recounted
in case it grew. The categories are the report's own (``ctxtop report --breakdown``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from engine.sessions.model import Message, SessionState
from engine.sessions.report import (
    BREAKDOWN_ORDER,
    _category,
    context_breakdown,
    context_tokens,
    estimate_messages,
)
from engine.tokens.encoding import Encoding

# More new messages than this at once (a first read): count them in bulk the report's way.
BULK_MESSAGES = 64


class CategoryTotals:
    def __init__(self) -> None:
        self._messages: list[Message] = []
        self._shares: list[Counter[str]] = []
        self._totals: Counter[str] = Counter()

    def _shared_prefix(self, context: list[Message]) -> int:
        limit = min(len(self._messages), len(context))
        keep = 0
        while keep < limit and self._messages[keep] is context[keep]:
            keep += 1
        return keep

    def update(self, state: SessionState, encoding: Encoding) -> dict[str, Any]:
        """A breakdown of the same shape as the report's ``context_breakdown``."""
        context = state.context
        keep = min(self._shared_prefix(context), max(len(context) - 1, 0))
        for gone in self._shares[keep:]:
            self._totals.subtract(gone)
        del self._messages[keep:]
        del self._shares[keep:]
        new = context[keep:]
        if len(new) > BULK_MESSAGES:
            context_breakdown(state, encoding)  # fills every block's count, in bulk
        else:
            estimate_messages(new, encoding)
        for message in new:
            share: Counter[str] = Counter()
            for block in message.blocks:
                share[_category(message, block)] += block.tokens or 0
            self._messages.append(message)
            self._shares.append(share)
            self._totals.update(share)
        estimated = sum(self._totals.values())
        figure = context_tokens(state, encoding)
        return {
            "categories": [
                {"category": name, "tokens": self._totals[name]}
                for name in BREAKDOWN_ORDER
                if self._totals[name] > 0
            ],
            "estimated_total": estimated,
            "unattributed": max(figure.value - estimated, 0) if figure.source != "estimated" else 0,
        }

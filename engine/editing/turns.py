"""Tool uses and turns, as the editor sees them in a session's raw records.

A turn is a user request and everything the model did in answer to it (its rounds). A tool use
is a call and its result; the two are edited together, never apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class ToolUse:
    """One tool call and its result, located in the session's records."""

    call_id: str
    name: str
    input: Any  # the call's input (a JSON object, or the arguments text)
    result: str | None  # the result text the model saw (None: no result yet)
    turn: int  # index of the turn it belongs to (0 = before the first user turn)
    order: int  # position among all tool uses, oldest first


@dataclass(slots=True)
class Scan:
    """What a format's scanner found: tool uses in order and the number of turns."""

    uses: list[ToolUse]
    turns: int

    def in_progress_turn(self) -> int | None:
        """The last turn if it is still in progress (a call without a result), else None."""
        if self.uses and any(use.result is None for use in self.uses if use.turn == self.turns):
            return self.turns
        return None


class ScanBuilder:
    """A format's scan as it walks the records: turns counted as they start, each call id's
    first call a tool use of the turn it is in, results set on the calls found."""

    __slots__ = ("_uses", "turns")

    def __init__(self) -> None:
        self._uses: dict[str, ToolUse] = {}
        self.turns = 0

    def new_turn(self) -> None:
        self.turns += 1

    def call(self, call_id: str, name: str, value: Any, result: str | None = None) -> None:
        """A tool call with its input (a later call of the same id is not another use)."""
        if call_id not in self._uses:
            uses = self._uses
            uses[call_id] = ToolUse(call_id, name, value, result, self.turns, len(uses))

    def use(self, call_id: str) -> ToolUse | None:
        """The use of ``call_id``, for its result (None: no call of that id came before)."""
        return self._uses.get(call_id)

    def scan(self) -> Scan:
        return Scan(list(self._uses.values()), self.turns)


def result_text(content: Any) -> str:
    """The text of a tool result's content: a string, or the text parts of a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    if content is None:
        return ""
    return str(content)

"""The contract of a compaction source (one per agent, in ``engine/agents/<name>/source.py``),
and helpers they share."""

from __future__ import annotations

from abc import ABC, abstractmethod
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

from ctxtop.engine.compaction.items import Call, Cut, Item
from ctxtop.engine.editing.placeholder import as_object as parse_input
from ctxtop.engine.editing.writer import Writer
from ctxtop.engine.sessions.model import SessionState

OVERFLOW_SIGNS = (
    "prompt is too long",
    "context_length_exceeded",
    "maximum context length",
    "context window",
    "input is too long",
    "too many tokens",
)


def is_overflow_text(text: str) -> bool:
    lowered = text.lower()
    return any(sign in lowered for sign in OVERFLOW_SIGNS)


def text_of(content: Any) -> str:
    """The text parts of a message's content (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            parts.append(part["text"])
    return "\n".join(parts)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def shifted(timestamp: Any, milliseconds: int) -> str:
    """``timestamp`` (ISO-8601) moved by ``milliseconds``; now when it does not parse."""
    if isinstance(timestamp, str):
        try:
            moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
        except ValueError:
            return now_iso()
        moment += timedelta(milliseconds=milliseconds)
        return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return now_iso()


class Source(ABC):
    """Built from the session's bytes (never the open file) and, when ctxtop can read the format,
    its ``SessionState``; ``render`` returns the compacted fork's bytes."""

    agent: ClassVar[str]
    writer_class: ClassVar[type[Writer]]  # the fork writer of the same format

    def __init__(
        self,
        path: Path,
        data: bytes,
        state: SessionState | None,
        *,
        parsed: list[Any] | None = None,
        writer: Writer | None = None,
    ) -> None:
        """``parsed``: the records of ``data``'s lines, when the caller has them already (a
        format read line by line; the inspector looks at many prefixes of one session).
        ``writer``: the fork writer of ``data`` already made (its decoded lines are shared)."""
        self.path = path
        self.data = data
        self.state = state
        self.writer: Writer = writer or self.writer_class(path, data, parsed)
        self.calls: dict[str, Call] = {}

    @abstractmethod
    def items(self) -> list[Item]:
        """The context the model sees next, as items, in order."""

    @abstractmethod
    def render(self, cut: Cut, message: str, session_id: str, pre_tokens: int) -> bytes:
        """The fork: standing items, the summary ``message``, the kept items, under the new id."""

    def model(self) -> str | None:
        return self.state.model if self.state else None

    def cwd(self) -> str | None:
        return self.state.cwd if self.state else None

    def call(self, call_id: str, name: str, value: Any) -> Call:
        """The call with this id (created once), so results can be attached to it later."""
        found = self.calls.get(call_id)
        if found is None:
            found = self.calls[call_id] = Call(call_id, name, parse_input(value))
        return found

    def result(self, call_id: str, text: str, is_error: bool = False) -> None:
        found = self.calls.get(call_id)
        if found is not None:
            found.result, found.is_error = text, is_error

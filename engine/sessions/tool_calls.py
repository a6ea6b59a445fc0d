"""A session's tool calls: the newest as objects, the long-settled ones packed in columns.

A call whose result text the session let go of (older than the newest ``RESULT_BUDGET``
characters of results, model.py) is only ever counted again as part of its tool's row, with
its result's size. A day-long session has hundreds of thousands of those; each is kept as a
row of ``ArchivedCalls`` (its id, name, line, result size and flags: under 100 bytes) instead of
a ``ToolCall`` with its strings (about 350), and the tools table reads their sums per tool.
Reading one by its id gives a snapshot of it; a result that comes for one later brings it back
as a ``ToolCall``.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, ValuesView
from dataclasses import dataclass
from typing import Any

from ctxtop.engine.sessions.columns import KeyedRows, TextColumn

_ERROR, _PERSISTED, _GONE = 1, 2, 4  # an archived row's flags
# The row of tool results whose call the log does not hold (a file that starts mid-session, a
# call in a part of the log ctxtop did not read): no tool of that name was called.
RESULTS_WITHOUT_CALL = "(results without their call)"


@dataclass(slots=True)
class ToolCall:
    """A tool call, keyed by its call id; its result is attached when it arrives."""

    call_id: str
    name: str
    line: int = 0
    input_text: str = ""
    # The result, None until it comes; a long session lets the text of older results go
    # (``RESULT_BUDGET``), keeping their length.
    result_text: str | None = None
    result_chars: int = 0
    is_error: bool = False
    raw_input: Any = None  # the input as JSON, when ``input_text`` is left to ``input()``
    # Where the agent saved the full output when only a preview went to the model (Claude Code
    # ``<persisted-output>``); ``result_text`` is then the preview, which is what counts.
    persisted_to: str | None = None
    # Moved to the session's ``ArchivedCalls`` (this object is then a stale copy, or a
    # snapshot read from there): the tools table counts it from the archive's sums.
    archived: bool = False
    # Which of the session's results is the call's (``SessionState._retain`` tells a result
    # replaced since from the current one by it: a text may come back as the same object).
    result_serial: int = 0

    def input(self) -> str:
        """The call's input as text (serialising ``raw_input`` on demand)."""
        if self.input_text or self.raw_input is None:
            return self.input_text
        return json.dumps(self.raw_input, ensure_ascii=False)


@dataclass(slots=True)
class ArchivedTotal:
    """What a tool's archived calls add to its row of the tools table."""

    calls: int = 0
    chars: int = 0  # of their results, to be estimated in tokens
    results: int = 0  # with a non-empty result
    persisted: int = 0


class ArchivedCalls:
    """Settled tool calls in columns, and their sums per tool name."""

    __slots__ = (
        "_chars",
        "_flags",
        "_index",
        "_lines",
        "_name_at",
        "_names",
        "_row_names",
        "ids",
        "totals",
    )

    def __init__(self) -> None:
        self.ids = TextColumn()
        self._index = KeyedRows()
        self._names: list[str] = []  # the distinct names; a row holds its place here
        self._name_at: dict[str, int] = {}
        self._row_names = array("I")
        self._lines = array("q")
        self._chars = array("q")
        self._flags = bytearray()
        self.totals: dict[str, ArchivedTotal] = {}

    def __len__(self) -> int:
        return len(self._lines)

    def add(self, call: ToolCall) -> None:
        name = call.name
        place = self._name_at.get(name)
        if place is None:
            place = self._name_at[name] = len(self._names)
            self._names.append(name)
            self.totals[name] = ArchivedTotal()
        self.ids.append(call.call_id)
        self._index.append(call.call_id)
        self._row_names.append(place)
        self._lines.append(call.line)
        chars = call.result_chars
        self._chars.append(chars)
        persisted = call.persisted_to is not None
        self._flags.append(_ERROR * call.is_error | _PERSISTED * persisted)
        total = self.totals[name]
        total.calls += 1
        total.chars += chars
        total.results += chars > 0
        total.persisted += persisted

    def find(self, call_id: str) -> int:
        """The row of the call ``call_id`` (-1: none)."""
        for row in self._index.rows(call_id, self.ids):
            if not self._flags[row] & _GONE:
                return row
        return -1

    def call(self, row: int) -> ToolCall:
        """A snapshot of the call in ``row``."""
        flags = self._flags[row]
        return ToolCall(
            self.ids[row] or "",
            self._names[self._row_names[row]],
            self._lines[row],
            result_chars=self._chars[row],
            is_error=bool(flags & _ERROR),
            persisted_to="" if flags & _PERSISTED else None,  # (the path is not kept)
            archived=True,
        )

    def take(self, row: int) -> ToolCall:
        """Take the call in ``row`` out (a result came for it): it is a ``ToolCall`` again."""
        call = self.call(row)
        call.archived = False
        self._flags[row] |= _GONE  # (its row stays, dropped: ``find`` passes it by)
        total = self.totals[call.name]
        total.calls -= 1
        total.chars -= call.result_chars
        total.results -= call.result_chars > 0
        total.persisted -= call.persisted_to is not None
        return call

    def rows(self) -> Iterator[int]:
        return (row for row, flags in enumerate(self._flags) if not flags & _GONE)

    def lines_of(self, names: Iterable[str]) -> list[int]:
        """The lines of the archived calls to any of ``names``."""
        places = {self._name_at[name] for name in names if name in self._name_at}
        if not places:
            return []
        return [self._lines[row] for row in self.rows() if self._row_names[row] in places]


class ToolCalls(Mapping[str, ToolCall]):
    """The session's calls by id: ``live`` ones as objects, then the ``archived`` ones (read
    as snapshots)."""

    __slots__ = ("archived", "live")

    def __init__(self) -> None:
        self.live: dict[str, ToolCall] = {}
        self.archived = ArchivedCalls()

    def __getitem__(self, call_id: str) -> ToolCall:
        call = self.get(call_id)
        if call is None:
            raise KeyError(call_id)
        return call

    def get(self, call_id: str, default: None = None) -> ToolCall | None:  # type: ignore[override]
        """The call ``call_id`` (None: no such call)."""
        call = self.live.get(call_id)
        if call is not None:
            return call
        row = self.archived.find(call_id)
        return None if row < 0 else self.archived.call(row)

    def __contains__(self, call_id: object) -> bool:
        if call_id in self.live:
            return True
        return isinstance(call_id, str) and self.archived.find(call_id) >= 0

    def __iter__(self) -> Iterator[str]:
        ids = self.archived.ids
        for row in self.archived.rows():
            yield ids[row] or ""
        yield from self.live

    def __len__(self) -> int:
        return len(self.live) + sum(total.calls for total in self.archived.totals.values())

    def values(self) -> ValuesView[ToolCall]:
        return _Calls(self)

    def calls(self) -> Iterator[ToolCall]:
        """The archived calls (snapshots) in the order they were archived, then the live ones."""
        archived = self.archived
        for row in archived.rows():
            yield archived.call(row)
        yield from self.live.values()


class _Calls(ValuesView[ToolCall]):
    def __init__(self, calls: ToolCalls) -> None:
        super().__init__(calls)
        self._calls = calls

    def __iter__(self) -> Iterator[ToolCall]:
        return self._calls.calls()


class ChangeLog:
    """Calls in the order they were added, given a (new) result or archived: only ever
    appended, so that a reader (the ledger, the cache walk) keeps its place and takes only what
    is new. The oldest entries of archived calls are dropped: ``base`` counts them, and a
    reader whose place is before it starts over from the archive's sums."""

    __slots__ = ("_head", "_items", "base")

    def __init__(self) -> None:
        self._items: list[ToolCall] = []
        self.base = 0
        self._head = 0  # the entries before it may be dropped

    def append(self, call: ToolCall) -> None:
        self._items.append(call)

    @property
    def end(self) -> int:
        """The place after the newest entry."""
        return self.base + len(self._items)

    def since(self, place: int) -> list[ToolCall]:
        """The entries from ``place`` (at least ``base``) on."""
        return self._items[max(place - self.base, 0) :]

    def __len__(self) -> int:
        return len(self._items)

    def drop_settled(self, settle: Callable[[ToolCall], bool]) -> None:
        """Drop the oldest entries while their calls are archived, or ``settle`` archives them
        (a call that never had a result, long ago)."""
        items = self._items
        head = self._head
        while head < len(items) and (items[head].archived or settle(items[head])):
            head += 1
        # (a list drops its head by copying the rest: done in batches, not entry by entry)
        if head >= 256 or head * 2 >= len(items):
            del items[:head]
            self.base += head
            head = 0
        self._head = head

"""A session's responses by key, the old ones kept in columns rather than as objects.

A day-long session logs a hundred thousand responses; as objects (a ``Response``, its ``Usage``,
its key and timestamp strings, a dict entry) they cost some 400 bytes each, and a cold read's
memory grew with the file. ``Responses`` keeps the newest as objects and moves the history (the
responses logged before the rewrite before the last one: ``SessionState.record_compaction``)
into an *archive*: columns of their keys, timestamps, usage figures and models, and a table of
the keys' hashes, about 100 bytes a response (measured at 1 GB, with 45-character keys).
Reading an archived response gives a fresh ``Response`` snapshot; revising one writes its
columns.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain, islice, starmap
from operator import attrgetter
from typing import cast

from ctxtop.engine.sessions.columns import KeyedRows, TextColumn

# Archiving on (tests switch it off to compare a read without it).
ARCHIVE = True


@dataclass(slots=True)
class Usage:
    """Token counts of one API response, normalised to Anthropic's split.

    ``input_tokens`` is *uncached* input only; the whole prompt is ``input_tokens_total``.
    ``output_tokens`` includes reasoning/thinking (``reasoning_tokens`` is the part of it that was
    reasoning, for display only). Codex: ``input_tokens = input - cached_input``,
    ``cache_read_tokens = cached_input``. Gemini: ``output_tokens = candidates + thoughts``.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    # The part of ``cache_write_tokens`` written to live an hour (Anthropic's
    # ``cache_creation.ephemeral_1h_input_tokens``): the cache simulation's TTL for it.
    cache_write_1h_tokens: int = 0

    @property
    def input_tokens_total(self) -> int:
        """The whole prompt of the request: uncached + cache read + cache write."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def total(self) -> int:
        return self.input_tokens_total + self.output_tokens

    def add(self, other: Usage, sign: int = 1) -> None:
        self.input_tokens += sign * other.input_tokens
        self.output_tokens += sign * other.output_tokens
        self.cache_read_tokens += sign * other.cache_read_tokens
        self.cache_write_tokens += sign * other.cache_write_tokens
        self.reasoning_tokens += sign * other.reasoning_tokens
        self.cache_write_1h_tokens += sign * other.cache_write_1h_tokens


@dataclass(slots=True)
class Response:
    """One model response (one API request), counted once however often the log repeats it."""

    key: str  # the de-duplication key: Claude message.id, Codex response_id, Gemini message id, …
    usage: Usage
    model: str | None = None
    line: int = 0  # first line of the main file (or of the sub-agent file) that carried it
    timestamp: str | None = None
    # Its place in its state's ``request_sizes`` (-1: not yet noted; a response belongs to
    # one state), kept here rather than in a dict by key: a long session has many responses.
    index: int = field(default=-1, compare=False, repr=False)


class _Times:
    """Timestamps by row: one as the agents write them (``2026-11-26T12:39:37.123Z``) packed
    in 64 bits as its 17 digits, any other text (or None) kept as text."""

    __slots__ = ("_packed", "_texts")

    def __init__(self) -> None:
        self._packed = array("q")  # the digits; -1 - its row in ``_texts`` for another text
        self._texts = TextColumn()

    def extend(self, stamps: Sequence[str | None]) -> None:
        packed = self._packed
        if None not in stamps:  # (most often all of them: in one pass)
            joined = "\n".join(cast("Sequence[str]", stamps)) + "\n"
            if joined.isascii():
                raw = joined.encode("ascii")
                if raw.translate(_ZEROS) == _SHAPE * len(stamps):
                    packed.extend(map(int, raw.translate(None, b"-T:.Z").split()))
                    return
        for stamp in stamps:
            if stamp is not None and _STAMP.fullmatch(stamp):
                packed.append(int(stamp.translate(_NOT_DIGITS)))
            else:
                packed.append(-1 - len(self._texts))
                self._texts.append(stamp)

    def __getitem__(self, row: int) -> str | None:
        value = self._packed[row]
        if value < 0:
            return self._texts[-1 - value]
        d = f"{value:017d}"
        return f"{d[:4]}-{d[4:6]}-{d[6:8]}T{d[8:10]}:{d[10:12]}:{d[12:14]}.{d[14:]}Z"


_STAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")
_NOT_DIGITS = str.maketrans("", "", "-T:.Z")
# A timestamp's shape (each digit read as 0), and the table that reads them so.
_SHAPE = b"0000-00-00T00:00:00.000Z\n"
_ZEROS = bytes.maketrans(b"123456789", b"000000000")


class _Values:
    """``Responses.values()``: iterable in index order, reversible, sized."""

    __slots__ = ("_of",)

    def __init__(self, of: Responses) -> None:
        self._of = of

    def __len__(self) -> int:
        return len(self._of)

    def __iter__(self) -> Iterator[Response]:
        of = self._of
        for index in range(of.archived):
            yield of.snapshot(index)
        yield from of._live.values()

    def __reversed__(self) -> Iterator[Response]:
        of = self._of
        yield from reversed(of._live.values())
        for index in range(of.archived - 1, -1, -1):
            yield of.snapshot(index)


class Responses:
    """A session's responses by key, in the order they were first recorded (their ``index``).

    The part of a dict's API the readers and the analysis use (``get``, ``in``, ``[key]``,
    ``len``, ``values()``) and ``add``. Responses ``[0, archived)`` are in the columns: reading
    one gives a new ``Response`` each time (compare responses by key, not identity), ``revise``
    writes its figures. ``lines`` is the state's ``request_lines`` (the archive's line column).
    """

    __slots__ = (
        "_index",
        "_keys",
        "_lines",
        "_live",
        "_model_index",
        "_model_of",
        "_models",
        "_times",
        "_usage",
        "archived",
    )

    def __init__(self, lines: array[int]) -> None:
        self._live: dict[str, Response] = {}  # the responses not archived, in index order
        self._lines = lines
        self.archived = 0
        self._keys = TextColumn()
        # Every new response is looked for here first (most often a miss at the first slot).
        self._index = KeyedRows()
        self._times = _Times()
        # Five figures a response (``Usage``'s fields, in order): 32 bits each while they fit
        # (a request's figures are at most ``adapter.MAX_TOKENS``), else 64.
        self._usage = array("i")
        self._models: list[str | None] = []
        self._model_index: dict[str | None, int] = {}
        self._model_of = array("I")

    # -- the dict API ----------------------------------------------------------------------

    def __len__(self) -> int:
        return self.archived + len(self._live)

    def __contains__(self, key: object) -> bool:
        if key in self._live:
            return True
        return self.archived > 0 and isinstance(key, str) and self._find(key) >= 0

    def __getitem__(self, key: str) -> Response:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def get(self, key: str) -> Response | None:
        found = self._live.get(key)
        if found is not None or not self.archived:
            return found
        index = self._find(key)
        return self.snapshot(index) if index >= 0 else None

    def values(self) -> _Values:
        return _Values(self)

    def __iter__(self) -> Iterator[str]:
        for index in range(self.archived):
            key = self._keys[index]
            assert key is not None
            yield key
        yield from self._live

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Responses):
            return NotImplemented
        return len(self) == len(other) and list(self.values()) == list(other.values())

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Responses({len(self)} responses, {self.archived} archived)"

    def add(self, response: Response) -> None:
        """A new response (its key not yet here), the newest: its ``index`` is ``len(self)``
        once the state has noted it."""
        self._live[response.key] = response

    # -- the archive -----------------------------------------------------------------------

    def snapshot(self, index: int) -> Response:
        """The response at ``index`` as a new object (an archived one) or the live one."""
        if index >= self.archived:
            return next(islice(self._live.values(), index - self.archived, None))
        key = self._keys[index]
        assert key is not None
        return Response(
            key,
            self.usage_at(index),
            self._models[self._model_of[index]],
            self._lines[index],
            self._times[index],
            index,
        )

    def figures(self, start: int, stop: int) -> Iterator[tuple[Usage, str | None]]:
        """The usage and model of the responses ``[start, stop)``, read from the columns for
        the archived ones (no ``Response`` made): what figures over the history need."""
        stop = min(stop, len(self))
        archived = min(stop, self.archived)
        if start < archived:  # (each column in one pass)
            figures = self._usage[FIGURES * start : FIGURES * archived]
            columns = (figures[field::FIGURES] for field in range(FIGURES))
            usages = starmap(Usage, zip(*columns, strict=True))
            models = map(self._models.__getitem__, self._model_of[start:archived])
            yield from zip(usages, models, strict=True)
        if stop > archived:
            live = islice(self._live.values(), max(start - self.archived, 0), stop - self.archived)
            for response in live:
                yield response.usage, response.model

    def usage_at(self, index: int) -> Usage:
        """The usage of the archived response at ``index`` (a new object)."""
        at = FIGURES * index
        return Usage(*self._usage[at : at + FIGURES])

    def revise(self, index: int, usage: Usage, model: str | None) -> None:
        """Give the archived response at ``index`` new figures (and ``model`` when not None)."""
        self._write(FIGURES * index, _figures(usage))
        if model:
            self._model_of[index] = self._model_number(model)

    def archive(self, bound: int, kept: str | None) -> int:
        """Move the oldest live responses to the columns up to the first one logged at or
        after line ``bound`` or under the key ``kept`` (the archive only grows by a prefix);
        returns how many were moved."""
        live = self._live
        start = self.archived
        moved: list[Response] = []
        for response in live.values():
            if response.line >= bound or response.key == kept:
                break
            moved.append(response)
        if not moved:
            return 0
        # (Column by column, each in one pass: a compaction moves a window of responses.)
        keys = [response.key for response in moved]
        self._keys.extend(keys)
        self._times.extend([response.timestamp for response in moved])
        self._write(len(self._usage), chain.from_iterable(map(_figures, map(_usage_of, moved))))
        models = list(map(_model_of, moved))
        numbers = self._model_index
        for model in set(models).difference(numbers):
            self._model_number(model)
        self._model_of.extend(map(numbers.__getitem__, models))
        self._index.extend(keys)
        self.archived = start + len(moved)
        self._live = dict(islice(live.items(), len(moved), None))
        return len(moved)

    def _write(self, at: int, figures: Iterable[int]) -> None:
        """Put usage figures at ``at`` (the end: added), in 64 bits from the first that does
        not fit in 32."""
        values = array("q", figures)
        try:
            column = array(self._usage.typecode, values)
        except OverflowError:
            self._usage = array("q", self._usage)
            column = values
        self._usage[at : at + len(values)] = column

    def _model_number(self, model: str | None) -> int:
        number = self._model_index.get(model)
        if number is None:
            number = self._model_index[model] = len(self._models)
            self._models.append(model)
        return number

    def _find(self, key: str) -> int:
        """The index of the archived response under ``key`` (-1: none)."""
        found = self._index.rows(key, self._keys)
        return found[0] if found else -1


# A usage's figures in the columns, in ``Usage``'s field order.
_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "cache_write_1h_tokens",
)
FIGURES = len(_FIELDS)
_figures: Callable[[Usage], tuple[int, ...]] = attrgetter(*_FIELDS)
_usage_of: Callable[[Response], Usage] = attrgetter("usage")
_model_of: Callable[[Response], str | None] = attrgetter("model")

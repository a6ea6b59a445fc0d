"""File → adapter → state: reads a session file (and its companions) incrementally.

``SessionReader(path).poll()`` reads whatever was appended since the last poll, decodes complete
lines, feeds them to the detected adapter and returns whether anything changed. A last line
without its newline counts once it is a whole JSON value: at once when the file is read as it
stands (``read_all``), after ``QUIET_LINE_SECONDS`` without growth when followed live. Bad lines
(invalid UTF-8, invalid JSON) are skipped and recorded in ``state.skipped`` with file and line.
A file that is one JSON document (a JSON array of messages, a pretty-printed object) is re-read
whole when it changes, since it cannot be appended to.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import msgspec

from ctxtop.engine.agents import ADAPTERS, AGENTS, detect, stored_session, written
from ctxtop.engine.agents.base import Agent
from ctxtop.engine.errors import InputError
from ctxtop.engine.files import open_regular, read_head
from ctxtop.engine.sessions.adapter import DETECT_RECORDS, Adapter
from ctxtop.engine.sessions.fork_mark import CTXTOP_TRIGGER, FORK_KEY, marked_tokens
from ctxtop.engine.sessions.json_lines import decode_line, fast_decode, opens_document
from ctxtop.engine.sessions.model import ForkEstimate, SessionState, SkippedLine
from ctxtop.engine.sessions.tail import (
    CHUNK,
    MAX_BATCH_LINES,
    QUIET_LINE_SECONDS,
    Batch,
    ByteSource,
    LineTailer,
)

# The first scan of a big file goes in slices of this many bytes (bounded memory for raw lines;
# the memory of one slice's lines is used again for the next: 8 MB slices made the allocator
# give it back and fault it in again, 5 % of a 100 MB read).
BATCH_BYTES = 1 << 20
# Before detection, at most this many decoded records are held waiting for a decision.
MAX_UNDETECTED = 2000


# Objects allocated during one read past which they are frozen (see ``collector_paused``): the
# collector's next pass over that many would stall the dashboard 10 ms or more (0.25 us an
# object; a 100 MB log of one chain leaves 150,000).
FREEZE_AFTER_OBJECTS = 50_000


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off while a session's lines are decoded and read (it would walk
    every new record again and again): one pause may hold another."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            # After a big read, the young generation holds the whole new state: the collector
            # would scan it once per generation on the next allocations (0.04-0.2 s each for a
            # 100 MB log, a stall of the dashboard). It holds no garbage cycles: freeze it.
            if gc.get_count()[0] > FREEZE_AFTER_OBJECTS:
                gc.freeze()
            gc.enable()


def feed_safely(
    adapter: Adapter, record: Any, line_no: int, path: Path | None = None, entry: Any = None
) -> None:
    """``adapter.feed`` (or ``feed_companion`` for ``path``) that cannot take the reader down: a
    record whose shape an adapter did not expect is skipped and reported with its file and line
    (a log holds whatever tools returned, and agents change their formats). ``entry``: the
    record's typed entry made already (``Adapter.entry``), fed instead of the record."""
    try:
        if path is None:
            if entry is None:
                adapter.feed(record, line_no)
            else:
                adapter.feed_entry(entry, line_no)
            if type(record) is not dict or FORK_KEY in record:  # (one test for most records)
                _note_fork_mark(adapter.state, record, line_no)
        else:
            adapter.feed_companion(path, record, line_no)
    except MemoryError:
        raise
    except Exception as error:
        where = str(path if path is not None else adapter.path)
        reason = f"unexpected record shape ({type(error).__name__})"
        adapter.state.skipped.append(SkippedLine(where, line_no, reason))


def _note_fork_mark(state: SessionState, record: Any, line_no: int) -> None:
    """A fork ctxtop wrote: its context is ctxtop's estimate until the agent's next request
    (for every agent's format, so it is read here rather than by each adapter)."""
    tokens = marked_tokens(record)
    if tokens is not None:
        state.fork_estimate = ForkEstimate(tokens, line_no)
        last = state.compactions[-1] if state.compactions else None
        if last is not None and last.trigger == CTXTOP_TRIGGER and last.post_tokens is None:
            # The compaction ctxtop wrote: its "after" is what the preview promised, fixed.
            last.post_tokens, last.post_source = tokens, "ctxtop"


def _document_records(document: Any) -> list[Any]:
    return list(document) if isinstance(document, list) else [document]


class DataTailer(LineTailer):
    """A ``LineTailer`` over bytes already in memory (a session as first read, a fork before it
    is written): the same lines, line numbers and held-back last line, and no file opened."""

    def __init__(self, path: Path, data: bytes) -> None:
        super().__init__(path)
        self.data = data

    def start_near_end(self, nbytes: int) -> bool:
        return False  # the bytes are read whole

    def read(self, limit: int | None = None) -> Batch:
        batch = Batch()
        end = len(self.data)
        while self.offset < end:
            if limit is not None and (
                batch.bytes_read >= limit or len(batch.lines) >= MAX_BATCH_LINES
            ):
                batch.more = True
                break
            chunk = self.data[self.offset : self.offset + CHUNK]
            batch.bytes_read += len(chunk)
            self.offset += len(chunk)
            self._split(chunk, batch)
        return batch


class SessionReader:
    """Follows one session file; ``state`` is the live ``SessionState`` (None until detected)."""

    def __init__(
        self,
        path: str | Path,
        adapter: type[Adapter] | None = None,
        tail_bytes: int | None = None,
        *,
        data: bytes | None = None,
        records: Sequence[Any] | None = None,
        entries: Sequence[Any] | None = None,
        lean_history: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``tail_bytes``: read only about the last that many bytes of a bigger file (a quick
        look: the latest request and context are right, totals cover that part only).
        ``data``: read these bytes as the file's content instead of the file (nothing is opened:
        no companion files either); ``path`` names the session in the state and in errors.
        ``records``: ``data``'s lines decoded already (``session_records``: ``records[n - 1]``
        is line ``n``), fed as they are: no line is decoded again, and every line is read in
        full (the decoding the lean history saves is done). ``entries``: the same lines as the
        detected agent's typed entries (``engine.sessions.entries.typed``), fed instead of the
        records (detection still looks at the records).
        ``lean_history``: a first read from the start may take the history before the agent's
        last compaction for its figures only (``Adapter.plan_history``); False: every line in
        full (the same figures, more work and memory). ``clock``: how long a last line without
        its newline has been quiet is measured on it (tests drive it)."""
        self.path = Path(path)
        self._forced = adapter
        self._data = data
        self._records = records if data is not None else None
        self._entries = entries if self._records is not None else None
        self._clock = clock
        stored = stored_session(self.path, clock) if data is None else None
        self._tailer: LineTailer
        if stored is not None:  # a session kept in a database: its rows as lines
            self._forced = self._forced or stored[0]
            self._tailer = stored[1]
            lean_history = False
        elif data is None:
            self._tailer = LineTailer(self.path, clock)
        else:
            self._tailer = DataTailer(self.path, data)
        self.stored = stored is not None
        self.partial = tail_bytes is not None and self._tailer.start_near_end(tail_bytes)
        self.adapter: Adapter | None = None
        self._held: list[tuple[int, Any]] = []
        self._held_skips: list[SkippedLine] = []
        self._document_mode = False
        self._document_stamp: tuple[int, int, int] | None = None
        self._companions: dict[Path, LineTailer] = {}
        self._unreadable: set[Path] = set()  # companions reported as unreadable
        self.error: str | None = None
        # A first read from the start lets the adapter plan the history it reads for figures
        # only (``Adapter.plan_history``); once that turned out wrong, every read is full.
        self._plan = lean_history and not self.partial and self._records is None
        self._planned: Adapter | None = None
        self._parent_looked = False  # a sub-agent's parent's factor (``_look_for_parent_factor``)

    def grow(self, data: bytes) -> None:
        """A reader of bytes in memory (``data=``): the session's bytes are now ``data``, the
        ones read so far and more, as a file followed live grows; the next poll reads the rest."""
        if not isinstance(self._tailer, DataTailer) or not data.startswith(self._tailer.data):
            raise ValueError("grow() takes the bytes read so far and more")
        self._data = self._tailer.data = data

    @property
    def state(self) -> SessionState | None:
        return self.adapter.snapshot() if self.adapter is not None else None

    def require_state(self) -> SessionState:
        """The state after a first poll; an error naming the file if its format is unknown."""
        if self.adapter is None:
            self.poll()
        if self.adapter is None:
            if self._data is None and not self.stored and not self.path.exists():
                raise InputError(str(self.path), "no such file")
            if self.error is not None:
                raise InputError(str(self.path), f"cannot read: {self.error}")
            if self._is_empty():  # Claude Code 2.0 leaves such files in its project folders
                raise InputError(str(self.path), "empty session (no records yet)")
            hint = next((h for cls in ADAPTERS if (h := cls.misnamed(self.path))), None)
            if hint is not None:
                raise InputError(str(self.path), hint)
            raise InputError(str(self.path), "not a session log of any supported agent")
        return self.adapter.snapshot()

    def last_written(self) -> float | None:
        """When the agent last wrote the session: the latest modification time of its file and
        the companion files read with it (sub-agents' logs), epoch seconds; None for bytes
        given or files that cannot be looked at. The dashboard's header and the sessions table
        keep this one clock (a copied or touched log's own timestamps may be older)."""
        if self._data is not None:
            return None
        times: list[float] = []
        for path in (self.path, *self._companions):
            try:
                times.append(written(path)[0])
            except OSError:
                continue
        return max(times) if times else None

    def _is_empty(self) -> bool:
        """Nothing but whitespace in the file (or the bytes given)."""
        if self._data is not None:
            return not self._data.strip()
        try:
            with self.path.open("rb") as handle:
                return not handle.read(4096).strip() and not handle.read(1)
        except OSError:
            return False

    # -- reading ---------------------------------------------------------------------------

    def poll(self, *, as_it_stands: bool = False) -> bool:
        """Read and apply what was appended; True when the state may have changed.

        A last line without its newline is read once it has been quiet ``QUIET_LINE_SECONDS``,
        or at once with ``as_it_stands`` (a cold read takes the file as finished).
        An unreadable file (permissions, a directory) is not an exception here, so a follower
        keeps going: ``error`` says what went wrong until a later poll succeeds.
        """
        quiet = 0.0 if as_it_stands else QUIET_LINE_SECONDS
        try:
            changed = self._poll_document() if self._document_mode else self._poll_lines(quiet)
            if self.adapter is not None and self._data is None:
                changed = self._poll_companions(quiet) or changed
        except OSError as error:
            self.error = error.strerror or str(error)
            return False
        self.error = None
        if self.adapter is not None and not self._parent_looked:
            changed = self._look_for_parent_factor() or changed
        return changed

    def _look_for_parent_factor(self) -> bool:
        """A sub-agent's own file whose parent the reader found: the parent's factor when the
        sub-agent started, once (engine/agents/parent_factor.py)."""
        state = self.adapter.snapshot() if self.adapter is not None else None
        if state is None or state.parent_path is None or state.first_activity is None:
            return False
        from ctxtop.engine.agents.parent_factor import parent_factor  # it reads with this class

        self._parent_looked = True
        state.parent_factor = parent_factor(state)
        return state.parent_factor is not None

    def _start_over(self) -> None:
        self.adapter = None
        self._planned = None
        self._parent_looked = False
        self._held.clear()
        self._held_skips.clear()
        self._companions.clear()

    def _poll_lines(self, quiet: float) -> bool:
        changed = False
        # Decoding creates many objects and no reference cycles: the cyclic collector would
        # only re-scan the growing state again and again (about 20 % of a first scan).
        with collector_paused():
            while True:
                batch = self._tailer.read(BATCH_BYTES)
                changed = self._apply(batch) or changed
                if not batch.more and not self._document_mode:
                    last = self._tailer.take_unterminated(quiet)
                    changed = (bool(last.lines) and self._apply(last)) or changed
                planned = self._planned
                if planned is not None and not batch.more and not self._document_mode:
                    self._planned = None  # the first read is done
                    planned.history_read()
                if self.adapter is not None and self.adapter.needs_full_read:
                    self._read_in_full()
                    continue
                if self._document_mode or not batch.more:
                    return changed

    def _read_in_full(self) -> None:
        """Read the file again from its start, every line through the full path."""
        self._plan = False
        self._tailer.restart()
        self._start_over()

    def _apply(self, batch: Batch) -> bool:
        if batch.reset:
            self._start_over()
            self.partial = False  # re-read from the start
        if not batch.lines:
            if self.adapter is None and not self._held and self._unterminated_document():
                self._document_mode = True
                self.partial = False
                self._tailer.restart()
                return self._poll_document()
            return batch.reset
        if self.adapter is None and not self._held and self._looks_like_document(batch.lines):
            self._document_mode = True
            self.partial = False
            self._tailer.restart()
            return self._poll_document()
        adapter = self.adapter
        path = str(self.path)
        given = self._records is not None  # (one decoder a batch, not a call more a line)
        entries = self._entries
        for line_no, raw in batch.lines:
            if adapter is not None and (adapter.ignores(raw) or adapter.feed_history(raw, line_no)):
                continue
            if given:
                record, reason = self._decoded(raw, line_no)
            else:
                try:  # (most lines: msgspec's value at once, without ``decode_line``'s call)
                    record, reason = fast_decode(raw), None
                except (msgspec.DecodeError, ValueError, RecursionError):
                    record, reason = decode_line(raw)
            if reason is not None:
                skipped = SkippedLine(path, line_no, reason)
                if adapter is None:
                    if len(self._held_skips) < MAX_UNDETECTED:
                        self._held_skips.append(skipped)
                else:
                    adapter.state.skipped.append(skipped)
                continue
            if record is None:
                continue
            if adapter is None:
                self._held.append((line_no, record))
                # Detection looks at the first records held: it is asked again only when they
                # change (a file of millions of unknown records took minutes otherwise).
                if len(self._held) <= DETECT_RECORDS or len(self._held) > MAX_UNDETECTED:
                    adapter = self._try_detect()
                continue
            if entries is None:
                feed_safely(adapter, record, line_no)
            else:
                feed_safely(adapter, record, line_no, entry=entries[line_no - 1])
        if adapter is not None:
            adapter.state.bytes_read = self._tailer.offset - self._tailer.pending_bytes
            adapter.state.lines_read = self._tailer.line_no
        return True

    def _entry(self, line_no: int) -> Any:
        """Line ``line_no``'s typed entry when they were given, else None."""
        return self._entries[line_no - 1] if self._entries is not None else None

    def _decoded(self, raw: bytes, line_no: int) -> tuple[Any, str | None]:
        """Line ``line_no``'s JSON value, or (None, reason), from the records given (a line
        kept as bytes there is blank or bad: decoded here for the reason)."""
        assert self._records is not None
        record = self._records[line_no - 1]
        return decode_line(record) if isinstance(record, bytes) else (record, None)

    def _looks_like_document(self, lines: Sequence[tuple[int, bytes]]) -> bool:
        line_no, first = lines[0]
        start = first.lstrip()
        if start.startswith(b"["):
            return True  # (said without decoding it)
        if not start.startswith(b"{"):
            return False
        decoded = decode_line(first) if self._records is None else self._decoded(first, line_no)
        return opens_document(first, decoded[1])

    def _unterminated_document(self) -> bool:
        """A file of one line without a newline: a JSON array, or a ``{"messages": …}`` object."""
        partial = self._tailer.partial.strip()
        if partial.startswith(b"["):
            return True
        if not partial.startswith(b"{") or not partial.endswith(b"}"):
            return False
        record, reason = decode_line(partial)
        return reason is None and isinstance(record, dict) and "messages" in record

    def _try_detect(self) -> Adapter | None:
        head = [record for _, record in self._held[:DETECT_RECORDS]]
        cls = self._forced or detect(head)
        if cls is None:
            if len(self._held) > MAX_UNDETECTED:
                self._held = self._held[-DETECT_RECORDS:]
            return None
        adapter = cls(self.path)
        if cls.entry is None:
            self._entries = None  # (entries are made only for an agent that has them)
        if self._plan:
            self._plan_history(adapter)
        adapter.state.skipped.extend(self._held_skips)
        self._held_skips.clear()
        for line_no, record in self._held:
            feed_safely(adapter, record, line_no, entry=self._entry(line_no))
        self._held.clear()
        self.adapter = adapter
        return adapter

    def _plan_history(self, adapter: Adapter) -> None:
        self._plan = False
        adapter.plan_history(self._history_source)
        self._planned = adapter

    def _history_source(self) -> ByteSource:
        """The session's bytes as they are now (``Adapter.plan_history``)."""
        return ByteSource(data=self._data) if self._data is not None else ByteSource(self.path)

    def _document_data(self) -> bytes | None:
        """The whole document when it changed since the last read, else None."""
        if self._data is not None:
            changed = self._document_stamp is None
            self._document_stamp = (0, len(self._data), 0)
            return self._data if changed else None
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return None
        stamp = (info.st_ino, info.st_size, info.st_mtime_ns)
        if stamp == self._document_stamp:
            return None
        self._document_stamp = stamp
        fd = open_regular(self.path)
        try:
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def _poll_document(self) -> bool:
        data = self._document_data()
        if data is None:
            return False
        try:
            document = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
            # Perhaps caught mid-rewrite: keep the last good state, read again on the next change.
            reason = f"invalid JSON document: {error}"
            self._held_skips = [SkippedLine(str(self.path), getattr(error, "lineno", 1), reason)]
            return False
        self._start_over()
        records = _document_records(document)
        cls = self._forced or detect(records[:DETECT_RECORDS])
        if cls is None:
            return True
        adapter = cls(self.path)
        for index, record in enumerate(records):
            feed_safely(adapter, record, index + 1)
        adapter.state.bytes_read = len(data)
        adapter.state.lines_read = len(records)
        self.adapter = adapter
        return True

    def _poll_companions(self, quiet: float) -> bool:
        adapter = self.adapter
        assert adapter is not None
        changed = False
        for path in adapter.companions():
            tailer = self._companions.get(path)
            if tailer is None:
                tailer = self._companions[path] = LineTailer(path, self._clock)
            try:
                batch = tailer.read()
                batch.lines += tailer.take_unterminated(quiet).lines
            except OSError as error:  # the session stays readable without this one
                if path not in self._unreadable:
                    self._unreadable.add(path)
                    why = f"cannot read: {error.strerror or error}"
                    adapter.state.skipped.append(SkippedLine(str(path), 0, why))
                continue
            if batch.reset:
                # A companion cannot be un-fed: start the whole session over next poll.
                self._tailer.restart()
                self._document_stamp = None
                self._start_over()
                return True
            for line_no, raw in batch.lines:
                if adapter.ignores(raw):
                    continue
                record, reason = decode_line(raw)
                if reason is not None:
                    adapter.state.skipped.append(SkippedLine(str(path), line_no, reason))
                elif record is not None:
                    feed_safely(adapter, record, line_no, path)
            changed = changed or bool(batch.lines)
        return changed


def read_all(reader: SessionReader) -> SessionState:
    """Read everything there is now (main file and companions, each to its last line, newline
    or not) and return the state."""
    # Companion files found by the first pass are read by the next ones.
    for _ in range(100):
        if not reader.poll(as_it_stands=True):
            break
    return reader.require_state()


def read_session(path: str | Path) -> SessionState:
    """Read a whole session file once and return its state."""
    return read_all(SessionReader(path))


def read_session_data(
    path: str | Path,
    data: bytes,
    records: Sequence[Any] | None = None,
    entries: Sequence[Any] | None = None,
) -> SessionState:
    """The session held in ``data`` (the bytes of a file at ``path``, or of one about to be
    written there), read in memory: the file is not opened, nor its companions. An error names
    ``path``. ``records``: ``data``'s lines decoded already, ``entries``: the same as typed
    entries (``SessionReader``'s)."""
    return read_all(SessionReader(path, data=data, records=records, entries=entries))


# At most this much of a file is read to tell its agent up front (``agent_of``).
HEAD_BYTES = 1 << 20


def agent_of(path: str | Path) -> Agent | None:
    """The agent whose reader claims the first lines of a JSONL file, from its first
    ``HEAD_BYTES`` only, so edit and compact can refuse what the agent's flags rule out before
    reading the rest. None when those lines do not tell (a JSON document, no agent's records,
    an unreadable file): the whole read then decides."""
    stored = stored_session(Path(path))
    if stored is not None:
        return AGENTS.get(stored[0].agent)
    try:
        head = read_head(Path(path), HEAD_BYTES)
    except OSError:
        return None
    lines = head.split(b"\n")[:-1]  # what follows the last newline may be cut short
    if not lines or not lines[0].lstrip().startswith(b"{"):
        return None
    records: list[Any] = []
    for number, raw in enumerate(lines):
        record, reason = decode_line(raw)
        if reason is not None and number == 0:
            return None  # perhaps a pretty-printed document: the whole read decides
        if record is not None:  # a bad line further on is skipped, as the reader skips it
            records.append(record)
        if len(records) == DETECT_RECORDS:
            break
    cls = detect(records)
    return AGENTS.get(cls.agent) if cls is not None else None

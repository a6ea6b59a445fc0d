"""Byte-offset tailing of an append-only file: only new bytes are read, complete lines come out.

The file is opened read-only for each read and closed again, so the agent's file is never held
open or written. A partial last line is kept until its newline arrives, or until the reader takes
it as finished (``take_unterminated``: a copied file often ends without a newline). A file that
shrank, was replaced (new inode) or whose bytes before our offset changed is reported as
``reset`` so the caller starts over.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from ctxtop.engine.files import open_regular

CHUNK = 1 << 20
# With a byte limit, a read also stops after this many lines: a slice of tiny lines would
# otherwise hold a million line objects (7M records of 8 bytes took 320 MB).
MAX_BATCH_LINES = 1 << 16
# Bytes just before the offset that are re-checked on each read to notice an in-place rewrite.
FINGERPRINT = 64
# A live file's last line without its newline is taken as a whole line once the file has not
# grown for this long (and the line is a whole JSON object or array). An agent writes a record
# and its newline in one write: a line it is still writing has grown within milliseconds, and
# one cut short mid-write does not decode. Its newline, should it come later, is no new line.
QUIET_LINE_SECONDS = 2.0


def whole_json(raw: bytes) -> bool:
    """Whether ``raw`` is one whole JSON object or array (a finished line of a JSONL log)."""
    stripped = raw.strip()
    if not stripped.endswith((b"}", b"]")):
        return False  # a cut-short line, or a bare number that more digits could extend
    try:
        msgspec.json.decode(stripped)
        return True
    except (msgspec.DecodeError, RecursionError):
        pass
    try:  # what msgspec refuses and the reader's stdlib fallback takes (NaN, a BOM, ...)
        json.loads(stripped.decode("utf-8"))
        return True
    except (ValueError, RecursionError):
        return False


@dataclass(slots=True)
class Batch:
    """What one read produced: complete lines (1-based number, raw bytes without the newline)."""

    lines: list[tuple[int, bytes]] = field(default_factory=list)
    reset: bool = False  # the file was truncated or replaced: previous lines are void
    bytes_read: int = 0
    more: bool = False  # stopped at the byte limit: there is more to read now


class LineTailer:
    """Follows one file by byte offset. ``clock``: the seconds a held last line has been quiet
    are measured on it (``time.monotonic``; tests pass their own)."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.monotonic) -> None:
        self.path = path
        self.offset = 0  # bytes consumed, including the held partial line
        self.line_no = 0  # lines emitted so far
        self._partial = bytearray()
        self._identity: tuple[int, int] | None = None
        self._fingerprint = b""
        self._drop_first = False
        self._clock = clock
        self._partial_since = 0.0  # when the held partial line last grew
        # The last line was handed out before its newline came (``take_unterminated``).
        self._taken = False
        self._refused = -1  # the length of a held line found not whole (not decoded again)

    def restart(self) -> None:
        self.offset = 0
        self.line_no = 0
        self._partial.clear()
        self._identity = None
        self._fingerprint = b""
        self._drop_first = False
        self._taken = False
        self._refused = -1

    def start_near_end(self, nbytes: int) -> bool:
        """Begin with the last ``nbytes`` of the file, dropping the line they cut into.

        For a quick look at a big file (``ctxtop sessions``); line numbers then count from there.
        Returns whether anything was left out.
        """
        try:
            size = os.stat(self.path).st_size
        except OSError:
            return False
        if size <= nbytes:
            return False
        self.offset = size - nbytes
        self._drop_first = True
        return True

    def read(self, limit: int | None = None) -> Batch:
        """Read what was appended since the last call, up to about ``limit`` bytes.

        A missing file reads as nothing. With a limit, ``Batch.more`` says whether to call again;
        reading a big file in slices keeps only one slice of raw lines in memory at a time.
        """
        batch = Batch()
        try:
            fd = open_regular(self.path)
        except FileNotFoundError:
            return batch
        try:
            info = os.fstat(fd)
            identity = (info.st_dev, info.st_ino)
            if self._identity is not None and (
                identity != self._identity
                or info.st_size < self.offset
                or not self._same_prefix(fd)
            ):
                self.restart()
                batch.reset = True
            self._identity = identity
            if info.st_size == self.offset:
                return batch
            os.lseek(fd, self.offset, os.SEEK_SET)
            while True:
                if limit is not None and (
                    batch.bytes_read >= limit or len(batch.lines) >= MAX_BATCH_LINES
                ):
                    batch.more = self.offset < info.st_size
                    break
                chunk = os.read(fd, CHUNK)
                if not chunk:
                    break
                batch.bytes_read += len(chunk)
                self.offset += len(chunk)
                self._split(chunk, batch)
            if self.offset >= FINGERPRINT:
                self._fingerprint = os.pread(fd, FINGERPRINT, self.offset - FINGERPRINT)
            else:
                self._fingerprint = os.pread(fd, self.offset, 0)
        finally:
            os.close(fd)
        return batch

    def _same_prefix(self, fd: int) -> bool:
        if not self._fingerprint:
            return True
        start = self.offset - len(self._fingerprint)
        return os.pread(fd, len(self._fingerprint), start) == self._fingerprint

    def take_unterminated(self, quiet: float = QUIET_LINE_SECONDS) -> Batch:
        """The held last line as a line of its own, when it is a whole JSON value and has not
        grown for ``quiet`` seconds (0: a file read as it stands); else an empty batch.

        Its newline arriving later is then skipped; anything else written after it continues
        that same line (and comes out under its number).
        """
        batch = Batch()
        partial = self._partial
        if not partial or len(partial) == self._refused:
            return batch
        if self._clock() - self._partial_since < quiet:
            return batch
        if not whole_json(bytes(partial)):
            self._refused = len(partial)  # a line only grows: decode it again once it has
            return batch
        self.line_no += 1
        batch.lines.append((self.line_no, bytes(partial)))
        partial.clear()
        self._taken = True
        return batch

    def _split(self, chunk: bytes, batch: Batch) -> None:
        if self._drop_first:
            cut = chunk.find(b"\n")
            if cut < 0:
                return
            self._drop_first = False
            chunk = chunk[cut + 1 :]
        if self._taken and chunk:
            self._taken = False
            if chunk.startswith(b"\n"):
                chunk = chunk[1:]  # the newline of the line already taken
            else:
                self.line_no -= 1  # more of the line already taken: the same line number
        pieces = chunk.split(b"\n")  # (the whole chunk: no sliced copy of it first)
        tail = pieces.pop()
        if not pieces:
            if chunk:
                self._partial += chunk
                self._partial_since = self._clock()
            return
        if self._partial:
            self._partial += pieces[0]
            pieces[0] = bytes(self._partial)
            self._partial.clear()
        first = self.line_no + 1
        self.line_no += len(pieces)
        batch.lines.extend(zip(range(first, self.line_no + 1), pieces, strict=True))
        if tail:
            self._partial += tail
            self._partial_since = self._clock()

    @property
    def partial(self) -> bytes:
        """The held-back partial last line."""
        return bytes(self._partial)

    @property
    def pending_bytes(self) -> int:
        """Bytes of a partial last line held back."""
        return len(self._partial)


class ByteSource:
    """Random access to the bytes of a session as they are now (a file, or bytes in memory),
    for looking back from the end before reading forward: ``lines_back`` finds lines by a byte
    pattern from the last one up, reading only as far back as the caller goes on asking."""

    STEP = 1 << 20

    def __init__(self, path: Path | None = None, data: bytes | None = None) -> None:
        self._path = path
        self._data = data
        self._fd: int | None = None
        self.size = 0
        if data is not None:
            self.size = len(data)
        elif path is not None:
            self._fd = open_regular(path)
            self.size = os.fstat(self._fd).st_size

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> ByteSource:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def read(self, start: int, end: int) -> bytes:
        start, end = max(start, 0), min(end, self.size)
        if end <= start:
            return b""
        if self._data is not None:
            return self._data[start:end]
        assert self._fd is not None
        return os.pread(self._fd, end - start, start)

    def lines_back(self, pattern: bytes, stop: int = 0) -> Iterator[tuple[int, bytes]]:
        """(start offset, line without its newline) of each complete line holding ``pattern``,
        the last one first; ``stop``: look no further back than that offset."""
        position = self._newline_before(self.size) + 1  # what follows may be cut short
        while position > stop:
            start = max(position - self.STEP, stop)
            # A match found here starts before ``position`` (it could not fit after it).
            found = self.read(start, position + len(pattern) - 1).rfind(pattern)
            if found < 0:
                position = start
                continue
            line_start = self._newline_before(start + found) + 1
            yield line_start, self.read(line_start, self._newline_after(start + found))
            position = line_start

    def contains(self, pattern: bytes, start: int, end: int) -> bool:
        """Whether ``pattern`` occurs within bytes ``start`` to ``end``."""
        position = start
        while position < end:
            window = self.read(position, min(position + self.STEP + len(pattern) - 1, end))
            if pattern in window:
                return True
            position += self.STEP
        return False

    def _newline_before(self, at: int) -> int:
        """The offset of the last newline before ``at`` (-1: none)."""
        position = at
        while position > 0:
            start = max(position - self.STEP, 0)
            found = self.read(start, position).rfind(b"\n")
            if found >= 0:
                return start + found
            position = start
        return -1

    def _newline_after(self, at: int) -> int:
        """The offset of the first newline from ``at`` (the size: none)."""
        position = at
        while position < self.size:
            found = self.read(position, position + self.STEP).find(b"\n")
            if found >= 0:
                return position + found
            position += self.STEP
        return self.size

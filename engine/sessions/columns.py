"""Packed columns for a long session's history: rows that no figure looks at one by one any more.

A Python object per history record (a tool call, a response) costs a few hundred bytes with its
strings and ints; a session read for a day holds hundreds of thousands of them. These columns
keep a row's texts in one shared buffer and find a row by its key through 16 bytes of hash.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import accumulate, islice
from struct import Struct


class TextColumn:
    """Texts (or None) by row, packed as UTF-8 in one buffer with each row's end offset."""

    __slots__ = ("_data", "_ends", "_none")

    def __init__(self) -> None:
        self._data = bytearray()
        self._ends = array("q")
        self._none: set[int] = set()  # rows holding None (rare: kept apart from "")

    def append(self, text: str | None) -> None:
        if text is None:
            self._none.add(len(self._ends))
        else:  # (a JSON string may carry a lone surrogate: kept as it came)
            self._data += text.encode("utf-8", "surrogatepass")
        self._ends.append(len(self._data))

    def extend(self, texts: Sequence[str]) -> None:
        """``append`` each of ``texts``, in one pass when they are ASCII (a byte a character)."""
        joined = "".join(texts)
        if not joined.isascii():
            for text in texts:
                self.append(text)
            return
        self._ends.extend(islice(accumulate(map(len, texts), initial=len(self._data)), 1, None))
        self._data += joined.encode("ascii")

    def __getitem__(self, row: int) -> str | None:
        if row in self._none:
            return None
        start = self._ends[row - 1] if row else 0
        return self._data[start : self._ends[row]].decode("utf-8", "surrogatepass")

    def __len__(self) -> int:
        return len(self._ends)


class _Buckets:
    """Entries of ``WIDTH`` bytes, each led by a 64-bit hash, packed in buckets by the hash's
    low bits: a Python set or dict costs 60 to 100 bytes an entry, and a long session has one
    for every history line. Buckets grow with the entries (to ``MOST``), so that a short
    history costs little too."""

    __slots__ = ("_buckets", "_count", "_mask")

    WIDTH = 8
    MOST = 4096  # buckets, at most
    FILL = 64  # entries per bucket before the buckets grow (while under ``MOST``)

    def __init__(self) -> None:
        self._buckets: list[bytearray] = [bytearray()]
        self._mask = 0
        self._count = 0

    def _add(self, code: int, entry: bytes) -> None:
        self._buckets[code & self._mask] += entry
        self._count += 1
        if self._count > self.FILL * len(self._buckets) and len(self._buckets) < self.MOST:
            self._grow()

    def _places(self, code: int, entry: bytes) -> tuple[bytearray, list[int]]:
        """The bucket of ``code`` and where in it the entries starting with ``entry`` are,
        oldest first (most often none: a list, not a generator, for the work of a miss)."""
        bucket = self._buckets[code & self._mask]
        at = bucket.find(entry)
        if at < 0:
            return bucket, []
        found = []
        while at >= 0:
            if not at % self.WIDTH:  # (a match across two entries is no match)
                found.append(at)
            at = bucket.find(entry, at + 1)
        return bucket, found

    def _grow(self) -> None:
        size = min(len(self._buckets) * 16, self.MOST)
        buckets = [bytearray() for _ in range(size)]
        mask, width = size - 1, self.WIDTH
        for bucket in self._buckets:
            codes = memoryview(bucket).cast("q")[:: width // 8]
            for at, code in enumerate(codes):
                buckets[code & mask] += bucket[at * width : (at + 1) * width]
        self._buckets, self._mask = buckets, mask


class Hashes(_Buckets):
    """A set of 64-bit hashes at 8 bytes each (a key added twice is kept twice)."""

    __slots__ = ()

    def add(self, code: int) -> None:
        self._add(code, _ONE(code))

    def __contains__(self, code: int) -> bool:
        return bool(self._places(code, _ONE(code))[1])


class KeyIndex(_Buckets):
    """Rows by a text key's hash, 16 bytes a row. A hash names candidates only: the caller
    checks each against the key's text (exact however rare a collision)."""

    __slots__ = ()

    WIDTH = 16

    def add(self, key: str, row: int) -> None:
        code = hash(key)
        self._add(code, _TWO(code, row))

    def rows(self, key: str) -> list[int]:
        """The rows added under a key with ``key``'s hash, oldest first."""
        code = hash(key)
        bucket, places = self._places(code, _ONE(code))
        return [_ONE_FROM(bucket, at + 8)[0] for at in places]

    def remove(self, key: str, row: int) -> None:
        code = hash(key)
        bucket, places = self._places(code, _TWO(code, row))
        if places:
            del bucket[places[0] : places[0] + 16]
            self._count -= 1


# Native order, as ``_Buckets._grow`` reads the hashes back through a memoryview.
_ONE, _ONE_FROM, _TWO = Struct("=q").pack, Struct("=q").unpack_from, Struct("=qq").pack

"""Packed columns for a long session's history: rows that no figure looks at one by one any more.

A Python object per history record (a tool call, a response) costs a few hundred bytes with its
strings and ints; a session read for a day holds hundreds of thousands of them. These columns
keep a row's texts in one shared buffer and find a row by its key through about 12 bytes of
hash table.
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


class Hashes:
    """A set of 64-bit hashes at 8 bytes each (a hash added twice is kept twice), packed in
    buckets by their low bits: a Python set of ints costs about 60 bytes an entry, and a long
    session notes one for every history line. Buckets grow with the entries (to ``MOST``), so
    that a short history costs little too."""

    __slots__ = ("_buckets", "_count", "_mask")

    MOST = 4096  # buckets, at most
    FILL = 64  # entries per bucket before the buckets grow (while under ``MOST``)

    def __init__(self) -> None:
        self._buckets: list[bytearray] = [bytearray()]
        self._mask = 0
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def add(self, code: int) -> None:
        self._buckets[code & self._mask] += _PACKED(code)
        self._count += 1
        if self._count > self.FILL * len(self._buckets) and len(self._buckets) < self.MOST:
            self._grow()

    def __contains__(self, code: int) -> bool:
        bucket = self._buckets[code & self._mask]
        packed = _PACKED(code)
        at = bucket.find(packed)
        while at >= 0:
            if not at & 7:  # (a match across two entries is no match)
                return True
            at = bucket.find(packed, at + 1)
        return False

    def _grow(self) -> None:
        size = min(len(self._buckets) * 16, self.MOST)
        buckets = [bytearray() for _ in range(size)]
        mask = size - 1
        for bucket in self._buckets:
            for code in memoryview(bucket).cast("q"):
                buckets[code & mask] += _PACKED(code)
        self._buckets, self._mask = buckets, mask


# Native order, as ``Hashes._grow`` reads the hashes back through a memoryview.
_PACKED = Struct("=q").pack


class KeyedRows:
    """Rows found by a text key, about 12 bytes a row: the low 32 bits of each row's key hash,
    and a table of ``row + 1`` by hash (0: empty; linear probing, at most half full). A hash
    names candidates only; ``rows`` checks them against the keys' column (exact however rare a
    collision). Rows are added in order, never removed: an owner marks a row dropped itself.
    Most lookups of a new key are a miss that ends at the first slot."""

    __slots__ = ("_hashes", "_table")

    def __init__(self) -> None:
        self._hashes = array("I")
        self._table = array("i", bytes(4 * 8))

    def append(self, key: str) -> None:
        """Add a row for ``key`` (the next row)."""
        wanted = hash(key) & _LOW32
        self._hashes.append(wanted)
        table = self._table
        if 2 * len(self._hashes) > len(table):
            self._grow()
            return
        mask = len(table) - 1
        slot = wanted & mask
        while table[slot]:
            slot = (slot + 1) & mask
        table[slot] = len(self._hashes)

    def extend(self, keys: Sequence[str]) -> None:
        """Add rows for ``keys``, numbered on from the rows there are."""
        start = len(self._hashes)
        self._hashes.extend([hash(key) & _LOW32 for key in keys])
        if 2 * len(self._hashes) > len(self._table):
            self._grow()
        else:
            self._place(start)

    def _grow(self) -> None:
        size = len(self._table)
        while 2 * len(self._hashes) > size:
            size *= 2
        self._table = array("i", bytes(4 * size))
        self._place(0)

    def _place(self, start: int) -> None:
        table = self._table
        mask = len(table) - 1
        for row, wanted in enumerate(self._hashes[start:], start + 1):
            slot = wanted & mask
            while table[slot]:
                slot = (slot + 1) & mask
            table[slot] = row

    def rows(self, key: str, keys: TextColumn) -> list[int]:
        """The rows whose key in ``keys`` is ``key``, oldest first."""
        table = self._table
        mask = len(table) - 1
        wanted = hash(key) & _LOW32
        slot = wanted & mask
        found = table[slot]
        if not found:
            return []
        rows = []
        while found:
            if self._hashes[found - 1] == wanted and keys[found - 1] == key:
                rows.append(found - 1)
            slot = (slot + 1) & mask
            found = table[slot]
        return sorted(rows)


_LOW32 = 0xFFFFFFFF

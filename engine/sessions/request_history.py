"""The context size after each request, as handed to readers: a view, not a copy.

A session read for a day has a hundred thousand requests; a tuple of their sizes on every update
cost time and memory that grew with the history (each size an int object). A view reads the
session's own array up to the length it was made at; the session copies its array (bytes, not
objects) before it changes a size a view can see (``SessionState._note_request``).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from itertools import islice
from typing import TypeVar, overload

T = TypeVar("T")


class SequenceView(Sequence[T]):
    """Equality and text of a read-only sequence, as a tuple of its items would have them."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"


class RequestHistory(SequenceView[int]):
    """The first ``length`` sizes of ``sizes``, which their owner never changes again."""

    __slots__ = ("_length", "_sizes")

    def __init__(self, sizes: array[int], length: int) -> None:
        self._sizes = sizes
        self._length = length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[int]: ...

    def __getitem__(self, index: int | slice) -> int | Sequence[int]:
        if isinstance(index, slice):
            return self._sizes[: self._length][index].tolist()
        if not -self._length <= index < self._length:
            raise IndexError(index)
        return self._sizes[index % self._length]

    def __iter__(self) -> Iterator[int]:
        return islice(self._sizes, self._length)

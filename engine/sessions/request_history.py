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
    """A read-only sequence read item by item (``_at``), with a tuple's indexing, equality and
    text; slices are lists."""

    __slots__ = ()

    def __len__(self) -> int:
        raise NotImplementedError

    def _at(self, index: int) -> T:
        """The item at ``index``, in range."""
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...

    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        length = len(self)
        if isinstance(index, slice):
            return [self._at(at) for at in range(length)[index]]
        if not -length <= index < length:
            raise IndexError(index)
        return self._at(index % length)

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

    def _at(self, index: int) -> int:
        return self._sizes[index]

    def __iter__(self) -> Iterator[int]:
        return islice(self._sizes, self._length)

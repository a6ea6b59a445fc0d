"""VS Code's object mutation log, replayed one line at a time.

A chat session ``.jsonl`` (VS Code 1.109+, ``objectMutationLog.ts``) is a JSON document kept as
its changes: ``{"kind": 0, "v": doc}`` starts over from a whole document, ``{"kind": 1, "k":
path, "v": value}`` sets the value at a path (a root path replaces nothing: VS Code leaves that to
its caller), ``{"kind": 2, "k": path, "v": [items], "i": n}`` cuts the array at ``path`` to ``n``
items when ``i`` is given and then appends ``v``, ``{"kind": 3, "k": path}`` deletes. Every 1,024
entries VS Code writes the file anew as one ``kind`` 0 line (``ChatSessionOperationLog``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SNAPSHOT, SET, PUSH, DELETE = 0, 1, 2, 3


class MutationError(ValueError):
    """A line that cannot apply to the document as it stands (its reason, for the skip)."""


@dataclass(frozen=True, slots=True)
class Change:
    """What a line changed: everything (``reset``), the requests from ``cut`` on (an array cut
    or replaced), one request (``request``), or other fields of the session (all None)."""

    reset: bool = False
    cut: int | None = None
    request: int | None = None


def is_mutation(record: Any) -> bool:
    """A line of a mutation log (as opposed to a whole ``.json`` session document)."""
    return (
        type(record) is dict
        and record.get("kind") in (SNAPSHOT, SET, PUSH, DELETE)
        and ("k" in record or "v" in record)
        and "requests" not in record
    )


class MutationLog:
    """The document a mutation log describes, as far as it has been read."""

    def __init__(self) -> None:
        self.doc: dict[str, Any] | None = None

    def apply(self, record: dict[str, Any]) -> Change:
        kind = record["kind"]
        if kind == SNAPSHOT:
            value = record.get("v")
            if type(value) is not dict:
                raise MutationError("snapshot without a session object")
            self.doc = value
            return Change(reset=True)
        if self.doc is None:
            raise MutationError("change before the first snapshot")
        path = record.get("k")
        if type(path) is not list or not all(type(p) in (str, int) for p in path):
            raise MutationError(f"change (kind {kind}) without a path")
        if not path:
            return Change()  # a root replacement: VS Code's own reader ignores it too
        parent = self._walk(path[:-1])
        last = path[-1]
        if kind == PUSH:
            self._push(parent, last, record.get("v"), record.get("i"))
        elif kind == SET:
            self._set(parent, last, record.get("v"))
        else:
            self._delete(parent, last)
        return _change(path, kind, record.get("i"))

    def _walk(self, path: list[str | int]) -> Any:
        node: Any = self.doc
        for step in path:
            try:
                node = node[step]
            except (KeyError, IndexError, TypeError):
                raise MutationError(f"no {_spelled(path)} to change") from None
        return node

    @staticmethod
    def _set(parent: Any, key: str | int, value: Any) -> None:
        try:
            if type(parent) is list and type(key) is int and key == len(parent):
                parent.append(value)
            else:
                parent[key] = value
        except (IndexError, TypeError):
            raise MutationError(f"cannot set {key!r}") from None

    @staticmethod
    def _delete(parent: Any, key: str | int) -> None:
        if type(parent) is dict:
            parent.pop(key, None)
        elif type(parent) is list and type(key) is int and 0 <= key < len(parent):
            parent[key] = None  # (JavaScript leaves an undefined hole)
        else:
            raise MutationError(f"cannot delete {key!r}")

    @staticmethod
    def _push(parent: Any, key: str | int, values: Any, start: Any) -> None:
        if values is not None and type(values) is not list:
            raise MutationError("push of something not a list")
        if start is not None and (type(start) is not int or start < 0):
            raise MutationError(f"push cutting at {start!r}")
        try:
            array = parent[key] if _has(parent, key) else None
        except TypeError:
            raise MutationError(f"cannot push to {key!r}") from None
        if array is None:
            array = []
        elif type(array) is not list:
            raise MutationError(f"push to {key!r}, not a list")
        if start is not None:
            del array[start:]
        if values:
            array.extend(values)
        MutationLog._set(parent, key, array)


def _has(parent: Any, key: str | int) -> bool:
    if type(parent) is dict:
        return key in parent
    return type(parent) is list and type(key) is int and 0 <= key < len(parent)


def _change(path: list[str | int], kind: int, start: Any) -> Change:
    """Which requests a change at ``path`` touched."""
    if path[0] != "requests":
        return Change()
    if len(path) == 1:
        if kind == PUSH and start is None:
            return Change(cut=None, request=-1)  # appended: the new ones (see the reader)
        return Change(cut=start if type(start) is int else 0)
    index = path[1]
    if type(index) is not int:
        return Change()
    if len(path) == 2 and kind != SET:
        return Change(cut=index)
    return Change(request=index)


def _spelled(path: list[str | int]) -> str:
    return "".join(f"[{p}]" if type(p) is int else f".{p}" for p in path) or "<root>"


__all__ = ["Change", "MutationError", "MutationLog", "is_mutation"]

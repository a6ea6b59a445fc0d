"""The context of a log that is a tree of entries (Pi's ``id``/``parentId``, Qwen Code's
``uuid``/``parentUuid``): the model sees the path from the newest entry back to the root. An
entry appended to the newest one extends the context; one appended anywhere else starts a
branch (a rewind, ``/tree``), and the context is rebuilt along its path. An entry may also
rewrite what came before it (a compaction)."""

from __future__ import annotations

from collections.abc import Callable

from ctxtop.engine.sessions.model import Message

Rewrite = Callable[[list[Message]], list[Message]]
Effect = Message | Rewrite


class EntryTree:
    def __init__(self, context: list[Message]) -> None:
        self.context = context  # the session's own list, changed in place
        self._parents: dict[str, str | None] = {}
        self._effects: dict[str, Effect] = {}
        self.leaf: str | None = None

    def add(self, entry_id: str, parent: str | None, effect: Effect | None = None) -> bool:
        """Add an entry as the newest; False when it started a branch (the context rebuilt)."""
        self._parents[entry_id] = parent
        if effect is not None:
            self._effects[entry_id] = effect
        extends = parent == self.leaf or (self.leaf is None and not self.context)
        self.leaf = entry_id
        if extends:
            if effect is not None:
                _apply(effect, self.context)
            return True
        path: list[str] = []
        seen: set[str] = set()
        at: str | None = entry_id
        while at is not None and at not in seen:  # (a cycle in a broken log ends the walk)
            seen.add(at)
            path.append(at)
            at = self._parents.get(at)
        context: list[Message] = []
        for step in reversed(path):
            known = self._effects.get(step)
            if known is not None:
                _apply(known, context)
        self.context[:] = context
        return False


def _apply(effect: Effect, context: list[Message]) -> None:
    if isinstance(effect, Message):
        context.append(effect)
    else:
        context[:] = effect(context)

"""ctxtop's own actions on the followed session (edit, compact, undo), for the event log.

The action log (engine/editing/action_log.py) is shared by every session; it is read again only when
its size or time stamp changed, so following a session costs one ``stat`` per update.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ctxtop.engine.editing.action_log import FORK_KINDS, log_path, read_actions
from ctxtop.engine.live.view import Event
from ctxtop.engine.tokens.short import short_tokens


def _same_file(name: object, path: Path) -> bool:
    if not isinstance(name, str) or not name:
        return False
    try:
        return os.path.realpath(name) == os.path.realpath(path)
    except OSError:
        return False


def _k(tokens: object) -> str:
    return short_tokens(tokens if isinstance(tokens, int) else None)


def action_text(action: dict[str, Any]) -> str:
    kind = str(action.get("kind"))
    fork = Path(str(action.get("fork") or "")).name
    if kind == "undo":
        gone = "removed" if action.get("removed") else "already gone"
        return f"ctxtop undo: fork {fork} {gone}"
    return (
        # The figures are ctxtop's tokenizer estimates of the context before and after.
        f"ctxtop {kind}: {_k(action.get('tokens_before'))}≈ -> {_k(action.get('tokens_after'))}≈"
        f" in fork {fork}"
    )


def session_actions(actions: list[dict[str, Any]], path: Path) -> tuple[Event, ...]:
    """The edits and compactions of this session (or of a fork of it), and their undos."""
    ours: set[str] = set()
    events: list[Event] = []
    for action in actions:
        kind = action.get("kind")
        mine = kind in FORK_KINDS and (
            _same_file(action.get("source"), path) or _same_file(action.get("fork"), path)
        )
        if kind == "undo":
            mine = action.get("edit_id") in ours
        if not mine:
            continue
        ours.add(str(action.get("id")))
        stamp = action.get("time")
        events.append(
            Event("action", 0, action_text(action), stamp if isinstance(stamp, str) else None)
        )
    return tuple(events)


class ActionWatch:
    """The session's actions, re-read when the action log changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp: tuple[float, int] | None = None
        self._events: tuple[Event, ...] = ()

    def _log_stamp(self) -> tuple[float, int] | None:
        try:
            info = log_path().stat()
        except OSError:
            return None
        return (info.st_mtime, info.st_size)

    def changed(self) -> bool:
        """The action log changed since the last ``events()`` (one ``stat``)."""
        return self._log_stamp() != self._stamp

    def events(self) -> tuple[Event, ...]:
        stamp = self._log_stamp()
        if stamp is None:
            self._stamp, self._events = None, ()
        elif stamp != self._stamp:
            self._stamp = stamp
            self._events = session_actions(read_actions(), self.path)
        return self._events

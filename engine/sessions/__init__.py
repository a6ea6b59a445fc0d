"""Session readers: agents' on-disk logs in, a live ``SessionState`` out.

The pieces, for the dashboard and the CLI:

- ``SessionReader(path)``: detects the agent from the file's content and reads it incrementally;
  ``poll()`` applies what was appended, ``state`` is the live ``SessionState``;
- ``follow(reader)``: an iterator of states, one after each change (watchfiles or polling);
- ``build_report(adapter)``: the figures of ``ctxtop report --json``;
- ``discover(agent)``: session files in the agents' default locations, newest first.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.agents.discovery import discover
    from engine.sessions.model import SessionState
    from engine.sessions.reader import SessionReader, read_all, read_session
    from engine.sessions.report import build_report, context_tokens
    from engine.sessions.watch import follow, follow_with

# Loaded on first use: importing a submodule (e.g. the adapters, for a CLI parser) stays cheap.
_HOMES = {
    "SessionReader": "engine.sessions.reader",
    "SessionState": "engine.sessions.model",
    "build_report": "engine.sessions.report",
    "context_tokens": "engine.sessions.report",
    "discover": "engine.agents.discovery",
    "follow": "engine.sessions.watch",
    "follow_with": "engine.sessions.watch",
    "read_all": "engine.sessions.reader",
    "read_session": "engine.sessions.reader",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'engine.sessions' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


__all__ = [
    "SessionReader",
    "SessionState",
    "build_report",
    "context_tokens",
    "discover",
    "follow",
    "follow_with",
    "read_all",
    "read_session",
]

"""The registry of agent plugins, in detection-tie order: one line per agent.

To add an agent: make a package ``engine/agents/<agent>/`` whose ``plugin.py`` declares its
``Agent`` (engine/agents/base.py says what it holds: its reader, where its sessions live, its
auto-compact rule, fork writer and naming, proxy identification and setup text) and whose
``__init__.py`` exports it as ``PLUGIN``; add its folder's name to ``FOLDERS``, and a sample
session to ``tests/agents/test_conformance.py``. Keep the generic OpenAI-messages format last.
The rest of ctxtop asks the functions below, never an agent.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ctxtop.engine.agents.base import Agent, ProxyUse
from ctxtop.engine.sessions.adapter import NOT_MINE, Adapter
from ctxtop.engine.sessions.tail import LineTailer

# The agents' folders (engine/agents/<folder>/), one line each.
FOLDERS = (
    "claude_code",
    "codex",
    "gemini_cli",
    "copilot_cli",
    "pi",
    "qwen_code",
    "opencode",
    "vscode_copilot",
    "openai_messages",  # keep last: the generic format
)


def _plugin(folder: str) -> Agent:
    found: Agent = importlib.import_module(f"{__name__}.{folder}").PLUGIN
    return found


AGENTS: dict[str, Agent] = {agent.name: agent for agent in map(_plugin, FOLDERS)}
ADAPTERS: list[type[Adapter]] = [agent.reader for agent in AGENTS.values()]


def by_agent(agent: str) -> type[Adapter]:
    """The adapter class for an agent name such as ``claude-code``."""
    for cls in ADAPTERS:
        if cls.agent == agent:
            return cls
    raise KeyError(agent)


def profile_of(agent: str) -> str:
    """The layout profile of an agent's prompts (the default one for a name not registered)."""
    known = AGENTS.get(agent)
    return known.profile if known is not None else Adapter.profile


def stored_session(
    path: Path, clock: Callable[[], float] = time.monotonic
) -> tuple[type[Adapter], LineTailer] | None:
    """The agent that keeps the session ``path`` names in a database, and a tailer of its rows
    (None: ``path`` is a file)."""
    for cls in ADAPTERS:
        tailer = cls.tailer(path, clock)
        if tailer is not None:
            return cls, tailer
    return None


def store_changed(path: Path, since: float) -> tuple[Path, list[tuple[Path, float]]] | None:
    """For a changed file that is an agent's session database: the database and its sessions
    written since ``since`` (see ``Adapter.store_changed``); None for any other file."""
    for cls in ADAPTERS:
        found = cls.store_changed(path, since)
        if found is not None:
            return found
    return None


def written(path: Path) -> tuple[float, int]:
    """When the session ``path`` was last written and its size: its file's modification time
    and size, or for a session in a database, what its agent says (``OSError`` if neither)."""
    for cls in ADAPTERS:
        if cls.written is not Adapter.written:
            found = cls.written(path)
            if found is not None:
                return found
    info = path.stat()
    return info.st_mtime, info.st_size


def detect(head: Sequence[Any]) -> type[Adapter] | None:
    """The adapter with the best detection score for these first records (None if no one)."""
    best: type[Adapter] | None = None
    best_score = NOT_MINE
    for cls in ADAPTERS:
        try:
            score = cls.detect(head)
        except Exception:  # a detector must not take the reader down
            score = NOT_MINE
        if score > best_score:
            best, best_score = cls, score
    return best


def proxied() -> list[ProxyUse]:
    """How each agent that can be started through ``ctxtop proxy`` is, in registry order."""
    return [agent.proxy for agent in AGENTS.values() if agent.proxy is not None]


def summary_openings() -> tuple[str, ...]:
    """How the agents' own compaction summaries begin."""
    return tuple(opening for agent in AGENTS.values() for opening in agent.summary_openings)


def names_fork(name: str, session_id: str) -> bool:
    """Whether ``name`` is a fork's file name some agent's writer gives for ``session_id``."""
    return any(agent.names_fork(name, session_id) for agent in AGENTS.values())


def undo_note(agent: object, session_id: object) -> str | None:
    """What ``ctxtop undo`` tells after removing a fork of ``agent`` (an id as the action log
    holds it) for ``session_id``: the agent's ``undo_note``, if it has one."""
    found = AGENTS.get(agent) if isinstance(agent, str) else None
    if found is None or found.undo_note is None or not isinstance(session_id, str):
        return None
    return found.undo_note.replace("{id}", session_id)


def compacts_unread(data: bytes) -> Agent | None:
    """The agent of a log ctxtop cannot read as a session but can compact (None: no such)."""
    return next((agent for agent in AGENTS.values() if agent.compacts_unread_log(data)), None)


__all__ = [
    "ADAPTERS",
    "AGENTS",
    "Adapter",
    "Agent",
    "by_agent",
    "compacts_unread",
    "detect",
    "names_fork",
    "profile_of",
    "proxied",
    "store_changed",
    "stored_session",
    "summary_openings",
    "undo_note",
    "written",
]

"""Finding sessions in each agent's default location, newest first."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ctxtop.engine.agents import AGENTS, written


@dataclass(frozen=True, slots=True)
class Found:
    agent: str
    path: Path
    mtime: float
    size: int


def discover(
    agent: str | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> list[Found]:
    """Session files of every agent (or one), newest modification first."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    found: list[Found] = []
    seen: set[Path] = set()
    for plugin in AGENTS.values():
        if agent not in (None, plugin.name):
            continue
        for path in plugin.discover(env, home):
            if path in seen:
                continue
            try:
                mtime, size = written(path)
            except OSError:
                continue
            if size == 0:
                continue  # created, nothing written yet (e.g. a resumed run's fresh id)
            seen.add(path)
            found.append(Found(plugin.name, path, mtime, size))
    found.sort(key=lambda item: item.mtime, reverse=True)
    return found


def newest(agent: str | None = None) -> Found | None:
    """The most recently written session, if any."""
    sessions = discover(agent)
    return sessions[0] if sessions else None

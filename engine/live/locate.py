"""Which session ``ctxtop`` follows when it is given no file, and where it looked."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from engine.errors import InputError
from engine.sessions.adapters import ADAPTERS
from engine.sessions.discovery import discover

# Where each agent keeps its sessions (shown when none is found): the agent's home variable
# (when it has one), its default home and the files below it. The generic OpenAI-format logs
# have no default place.
LOCATIONS: dict[str, tuple[str | None, str, str]] = {
    "claude-code": ("CLAUDE_CONFIG_DIR", "~/.claude", "projects/*/*.jsonl"),
    "codex": ("CODEX_HOME", "~/.codex", "sessions/**/rollout-*.jsonl"),
    # GEMINI_CLI_HOME stands for the home directory, .gemini lives below it.
    "gemini-cli": ("GEMINI_CLI_HOME", "~", ".gemini/tmp/*/chats/session-*.jsonl"),
    "copilot-cli": ("COPILOT_HOME", "~/.copilot", "session-state/*/events.jsonl"),
}
NO_PLACE = "no default place: open such a log by name"


def agents() -> list[str]:
    return [cls.agent for cls in ADAPTERS]


def where(agent: str, env: Mapping[str, str] | None = None) -> str:
    """Where an agent's sessions live, with its home variable resolved when it is set."""
    env = os.environ if env is None else env
    known = LOCATIONS.get(agent)
    if known is None:
        return NO_PLACE
    variable, default, pattern = known
    home = (env.get(variable) if variable else None) or default
    return f"{home}/{pattern}"


def searched(agent: str | None = None) -> list[str]:
    """One line per agent searched: its name and where its sessions live."""
    return [f"{name}: {where(name)}" for name in agents() if agent in (None, name)]


@dataclass(frozen=True, slots=True)
class Target:
    """The session to show: a file (None when nothing was found) and whether to follow newer."""

    path: Path | None
    agent: str | None
    follow_newest: bool


def check_agent(agent: str | None) -> None:
    if agent is not None and agent not in agents():
        raise InputError("--agent", f"unknown agent {agent!r} (known: {', '.join(agents())})")


def newest_session(agent: str | None = None) -> Path | None:
    found = discover(agent)
    return found[0].path if found else None


def choose(session: str | None, agent: str | None) -> Target:
    """A named file is followed as is; otherwise the newest session, switching to newer ones."""
    check_agent(agent)
    if session is not None:
        path = Path(session)
        if not path.is_file():
            raise InputError(session, "no such session file")
        return Target(path, agent, follow_newest=False)
    return Target(newest_session(agent), agent, follow_newest=True)

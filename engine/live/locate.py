"""Which session ``ctxtop`` follows when it is given no file, and where it looked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.errors import InputError
from engine.sessions.adapters import ADAPTERS
from engine.sessions.discovery import discover

# Where each agent keeps its sessions (shown when none is found); an agent not listed here
# is named with its default location left unsaid.
LOCATIONS = {
    "claude-code": "$CLAUDE_CONFIG_DIR/projects/*/*.jsonl (default ~/.claude/projects)",
    "codex": "$CODEX_HOME/sessions/**/rollout-*.jsonl (default ~/.codex/sessions)",
    "gemini-cli": "~/.gemini/tmp/*/chats/*.json",
    "copilot-cli": "~/.copilot/session-state/",
}


def agents() -> list[str]:
    return [cls.agent for cls in ADAPTERS]


def searched(agent: str | None = None) -> list[str]:
    """One line per agent searched: its name and where its sessions live."""
    names = [name for name in agents() if agent in (None, name)]
    return [f"{name}: {LOCATIONS.get(name, 'its default location')}" for name in names]


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

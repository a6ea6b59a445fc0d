"""Which session ``ctxtop`` follows when it is given no file, and where it looked."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ctxtop.engine.agents import AGENTS, detect, stored_session
from ctxtop.engine.agents.discovery import Found, discover
from ctxtop.engine.errors import InputError
from ctxtop.engine.files import read_head
from ctxtop.engine.sessions.adapter import DETECT_RECORDS
from ctxtop.engine.sessions.json_lines import decode_line

NO_PLACE = "no default place: open such a log by name"


def agents() -> list[str]:
    return list(AGENTS)


def where(agent: str, env: Mapping[str, str] | None = None) -> str:
    """Where an agent's sessions live, with its home variable resolved when it is set."""
    env = os.environ if env is None else env
    known = AGENTS.get(agent)
    if known is None or known.sessions is None:
        return NO_PLACE
    return known.sessions.where(env)


def searched(agent: str | None = None) -> list[str]:
    """One line per agent searched: its name and where its sessions live."""
    return [f"{name}: {where(name)}" for name in agents() if agent in (None, name)]


@dataclass(frozen=True, slots=True)
class Target:
    """The session to show: a file (None when nothing was found) and whether to follow newer."""

    path: Path | None
    agent: str | None
    follow_newest: bool
    # Following the newest: the newer files passed over (not sessions) and the sessions listed.
    skipped: tuple[Path, ...] = ()
    listed: tuple[Found, ...] = ()


def check_agent(agent: str | None) -> None:
    if agent is not None and agent not in agents():
        raise InputError("--agent", f"unknown agent {agent!r} (known: {', '.join(agents())})")


# Bytes read from the start of a candidate to tell a session from junk of the same name.
SNIFF_BYTES = 256 << 10


def is_session(path: Path) -> bool:
    """Whether the first records of ``path`` are a known agent's (a file still empty, or whose
    first line is not complete yet, counts: the agent is writing it)."""
    if stored_session(path) is not None:
        return True  # listed from the agent's database
    try:
        head = read_head(path, SNIFF_BYTES)
    except OSError:
        return False
    lines = head.split(b"\n")[:-1] if b"\n" in head else []
    if not lines:
        return len(head) < SNIFF_BYTES  # its first line is still being written
    records = [record for record, _ in map(decode_line, lines[:DETECT_RECORDS])]
    return detect([record for record in records if record is not None]) is not None


def newest_sessions(
    agent: str | None = None, listed: Sequence[Found] | None = None
) -> tuple[Path | None, list[Path]]:
    """The newest real session, and the newer files (by name a session) that are not
    (``listed``: the agent's sessions as ``discover`` just listed them)."""
    skipped: list[Path] = []
    for found in discover(agent) if listed is None else listed:
        if is_session(found.path):
            return found.path, skipped
        skipped.append(found.path)
    return None, skipped


def not_a_session_file(path: Path) -> str | None:
    """What ``path`` is, if it cannot be a session file (None for a regular file, or a
    session in an agent's database: its reader tells what is wrong with it)."""
    if stored_session(path) is not None:
        return None
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "no such session file"
    except OSError as error:
        return f"cannot read: {error.strerror or error}"
    if stat.S_ISREG(mode):
        return None
    kinds = {
        stat.S_ISDIR: "a directory",
        stat.S_ISFIFO: "a named pipe",
        stat.S_ISCHR: "a device",
        stat.S_ISBLK: "a device",
        stat.S_ISSOCK: "a socket",
    }
    what = next((name for test, name in kinds.items() if test(mode)), "not a regular file")
    return f"{what}, not a session file (name a session's .jsonl or .json file)"


def choose(session: str | None, agent: str | None) -> Target:
    """A named file is followed as is; otherwise the newest session, switching to newer ones."""
    check_agent(agent)
    if session is not None:
        path = Path(session)
        problem = not_a_session_file(path)
        if problem is not None:
            raise InputError(session, problem)
        return Target(path, agent, follow_newest=False)
    listed = tuple(discover(agent))
    newest, skipped = newest_sessions(agent, listed)
    return Target(newest, agent, follow_newest=True, skipped=tuple(skipped), listed=listed)

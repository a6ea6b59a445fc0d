"""``undo``: remove the files of one fork ctxtop wrote (the newest by default), and log it.

The action log is not trusted blindly: each path is removed only if it is a file of ctxtop's
own naming (a fork named after its session id, or a large-result file in the directory named
after it), in the directory it was written to (no link swapped in since), with the size and
hash logged when it was written, and a fork only if the file itself carries ctxtop's fork mark
naming that session (engine/sessions/fork_mark.py): a forged log line can copy an agent's
session's name, size and hash, not a mark the agent never writes. Otherwise nothing is removed
and the error says why,
``--force`` included; ``--force`` only lets a fork go that the agent resumed, i.e. appended to
(its first bytes are still the ones ctxtop wrote).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ctxtop.engine.editing import action_log
from ctxtop.engine.editing.atomic import remove_stale_temps
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.sessions.fork_mark import marked_fork

# The result files' names (engine.editing.offload.file_stem, then .json, .txt, .schema.json).
_RESULT_NAME = re.compile(r"[A-Za-z0-9_-]{1,80}-[0-9a-f]{10}(?:\.schema)?\.(?:json|txt)")


# Whether a file name is one the agents' writers give a fork of that session id
# (``engine.agents.names_fork``: each agent declares its own).
ForkNamed = Callable[[str, str], bool]


def _written_part(path: Path, size: int) -> bytes:
    """The first ``size`` bytes of the regular file ``path`` (not following a link, never
    waiting on a named pipe): what ctxtop wrote, if the file is still its."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    with open(fd, "rb") as handle:
        return handle.read(size)


def _refusal(target: dict[str, Any], file: Any, force: bool, fork_named: ForkNamed) -> str | None:
    """Why the recorded ``file`` must not be removed, or None (also when it is gone already)."""
    if not isinstance(file, dict) or not isinstance(file.get("path"), str):
        return "no path recorded"
    path = Path(file["path"])
    size, digest, role = file.get("size"), file.get("sha256"), file.get("role")
    if not isinstance(size, int) or not isinstance(digest, str):
        return "no size and hash were recorded when it was written"
    session_id = str(target.get("session_id") or "")
    if role == "fork":
        ours = bool(action_log.SESSION_ID.fullmatch(session_id)) and fork_named(
            path.name, session_id
        )
    elif role == "result":
        ours = path.parent.name == session_id and bool(_RESULT_NAME.fullmatch(path.name))
    else:
        ours = False
    if not path.is_absolute() or not ours:
        return f"not a {role or 'file'} name ctxtop gives (session {session_id or '?'})"
    if os.path.realpath(path.parent) != str(path.parent):
        return "its directory is not where ctxtop wrote it (a link was put in its path)"
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"cannot look at it ({error.strerror or error})"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file (ctxtop wrote one)"
    appended = role == "fork" and force and info.st_size > size
    if info.st_size != size and not appended:
        grown = "(the agent resumed it?); use --force to remove it anyway" if role == "fork" else ""
        return f"changed since ctxtop wrote it: {info.st_size} bytes, not {size} {grown}".rstrip()
    try:
        written = _written_part(path, size)
    except OSError as error:
        return f"cannot read ({error.strerror or error})"
    if hashlib.sha256(written).hexdigest() != digest:
        return "its bytes are not the ones ctxtop wrote"
    if role == "fork" and marked_fork(written) != session_id:
        return f"the file carries no ctxtop fork mark for session {session_id}: not ctxtop's fork"
    return None


def _files(target: dict[str, Any]) -> list[Any]:
    files = target.get("files")
    if isinstance(files, list):
        return files
    # Logged by an older ctxtop: paths only, no sizes (refused below unless gone already).
    named = [target.get("fork"), *(target.get("offloaded") or [])]
    return [{"path": name, "role": None} for name in named if name]


def undo(
    action_id: str | None = None, *, force: bool = False, fork_named: ForkNamed
) -> dict[str, Any]:
    """Remove the files of one fork (the newest if ``action_id`` is None) and log the undo."""
    forks = action_log.live_forks()
    if not forks:
        raise CtxtopError("no forks to undo (ctxtop undo lists them)")
    if action_id is None:
        target = forks[-1]
    else:
        matches = [a for a in forks if str(a.get("id", "")).startswith(action_id)]
        if len(matches) != 1:
            raise CtxtopError(f"no single fork matches {action_id!r}; run ctxtop undo --list")
        target = matches[0]
    files = _files(target)
    for file in files:  # every file checked before any is removed
        why = _refusal(target, file, force, fork_named)
        if why is not None:
            name = file.get("path") if isinstance(file, dict) else None
            raise CtxtopError(f"{name or target.get('fork')}: not removed: {why}")
    removed: list[str] = []
    for file in files:
        with contextlib.suppress(FileNotFoundError):  # another ctxtop undid it meanwhile
            os.unlink(file["path"])
            removed.append(file["path"])
    for file in files:
        if file.get("role") == "result":
            with contextlib.suppress(OSError):  # not empty, or gone already
                os.rmdir(Path(file["path"]).parent)
    fork = str(target.get("fork") or "")
    action_log.record(
        "undo",
        edit_id=target["id"],
        fork=fork or None,
        removed=fork in removed,
        removed_files=[name for name in removed if name != fork],
    )
    return {
        "edit_id": target["id"],
        "kind": target.get("kind", "edit"),
        "agent": target.get("agent"),
        "session_id": target.get("session_id"),
        "fork": fork or None,
        "removed": fork in removed,
        "removed_files": [name for name in removed if name != fork],
    }


def remove_temps_of_unlogged() -> list[Path]:
    """Remove the temporaries dead ctxtop processes left where unlogged files were going."""
    directories = {Path(str(i.get("path"))).parent for i in action_log.uncompleted_intents()}
    return [temp for directory in directories for temp in remove_stale_temps(directory)]

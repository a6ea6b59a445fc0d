"""The action log: every edit and undo ctxtop performed, one JSON line each, in ``data_dir()``."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.files import append_line
from ctxtop.engine.paths import data_dir

LOG_NAME = "actions.jsonl"
FORK_KINDS = ("edit", "compact", "restore")  # actions that write a fork ``ctxtop undo`` can remove
INTENT = "intent"  # a file about to be written; the action's own line completes it
UNLOGGED = "unlogged"  # files of intents no action line completed (ctxtop was killed)
# A fork's session id: a UUID, or a prefixed time-ordered id (``ses_`` + 12 hex + 14 base-62).
SESSION_ID = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[a-z]{3}_[0-9a-f]{12}[0-9A-Za-z]{14}"
)
# Intents logged by this process and not yet completed by their action's line, by path.
_pending: dict[str, dict[str, Any]] = {}


def log_path() -> Path:
    return data_dir() / LOG_NAME


def record(kind: str, written: Sequence[Path] = (), **fields: Any) -> dict[str, Any]:
    """Append one action (``kind``: "edit", "compact" or "undo") with its inputs and outputs.

    Paths are recorded absolute and resolved, so that undo works from any directory. The
    ``written`` files (the action's new files) are recorded with the size and hash of their
    intent (``record_intent``, logged before each got its name), which completes it. If the log
    cannot be written, they are removed again, since no undo could find them, and the error
    says so."""
    for key in ("source", "fork"):
        if isinstance(fields.get(key), str) and fields[key]:
            fields[key] = absolute(fields[key])
    if isinstance(fields.get("offloaded"), list):
        fields["offloaded"] = [absolute(str(name)) for name in fields["offloaded"]]
    if written:
        fields["files"] = [_written_file(path) for path in written]
    return _append({"kind": kind, **fields}, written)


def record_intent(target: Path, role: str, data: bytes) -> dict[str, Any]:
    """Log that ``target`` (a "fork" or a "result" file) is about to be given ``data``; done
    before its name appears, so a ctxtop killed before the action's own line leaves a trace
    that ``undo --list`` shows (an unlogged fork). ``CtxtopError`` if the log cannot be written:
    then nothing is written either."""
    entry = _append(
        {
            "kind": INTENT,
            "path": absolute(str(target)),
            "role": role,
            "size": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
    )
    _pending[entry["path"]] = entry
    return entry


def forget_intent(target: Path) -> None:
    """The write of ``target`` failed: no action will complete its intent."""
    _pending.pop(absolute(str(target)), None)


def absolute(name: str) -> str:
    return os.path.realpath(name)


def _written_file(path: Path) -> dict[str, Any]:
    """What undo checks before removing ``path``: its intent's size and hash (or, for a file
    written without one, as it is now)."""
    name = absolute(str(path))
    intent = _pending.pop(name, None)
    if intent is None:
        try:
            data = path.read_bytes()
        except OSError:
            data = b""
        intent = {"id": None, "role": "fork", "size": len(data)}
        intent["sha256"] = hashlib.sha256(data).hexdigest() if data else None
    return {
        "path": name,
        "role": intent["role"],
        "size": intent["size"],
        "sha256": intent["sha256"],
        "intent": intent["id"],
    }


def _append(fields: dict[str, Any], written: Sequence[Path] = ()) -> dict[str, Any]:
    kind = fields["kind"]
    entry: dict[str, Any] = {
        "id": uuid.uuid4().hex[:12],
        "time": datetime.now(UTC).isoformat(timespec="seconds"),
        **fields,
    }
    path = log_path()
    line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")
    try:
        append_line(path, line)
    except OSError as error:
        for written_path in written:
            with contextlib.suppress(OSError):
                written_path.unlink()
        reason = error.strerror or str(error)
        if kind == INTENT:  # logged before its file, which is then not written either
            raise CtxtopError(
                f"{fields['path']}: not written: the action log {path} cannot record it ({reason})"
            ) from None
        removed = "; its new files were removed" if written else ""
        raise CtxtopError(
            f"{path}: cannot record the {kind} ({error.strerror or error}){removed}"
        ) from None
    return entry


def read_actions() -> list[dict[str, Any]]:
    """All recorded actions (edits, compactions, undos), oldest first; not the intents."""
    return [entry for entry in read_log() if entry.get("kind") != INTENT]


def read_log() -> list[dict[str, Any]]:
    """Every line of the log, intents included, oldest first (unreadable lines skipped)."""
    path = log_path()
    if not path.exists():
        return []
    actions: list[dict[str, Any]] = []
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict):
            actions.append(entry)
    return actions


def live_forks() -> list[dict[str, Any]]:
    """Edit (and compact) actions whose fork was written and not undone yet, and the files of
    intents no action completed (kind "unlogged", one entry per fork session id), oldest
    first."""
    actions = read_log()
    undone = {a.get("edit_id") for a in actions if a.get("kind") == "undo"}
    forks: list[dict[str, Any]] = []
    for action in actions:
        written = action.get("kind") in FORK_KINDS and action.get("fork")
        if written and action.get("id") not in undone:
            forks.append(action)
    unlogged: dict[str, dict[str, Any]] = {}
    for intent in uncompleted_intents(actions):
        _add_unlogged(unlogged, forks, intent, undone)
    forks.sort(key=lambda entry: str(entry.get("time") or ""))  # stable: log order within
    return forks


def uncompleted_intents(actions: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Intents no edit or compact line completed (its process was killed, or the write failed)."""
    actions = read_log() if actions is None else actions
    completed = {
        file.get("intent")
        for a in actions
        if a.get("kind") in FORK_KINDS
        for file in a.get("files") or []
        if isinstance(file, dict)
    }
    return [a for a in actions if a.get("kind") == INTENT and a.get("id") not in completed]


def _add_unlogged(
    groups: dict[str, dict[str, Any]],
    forks: list[dict[str, Any]],
    intent: dict[str, Any],
    undone: set[Any],
) -> None:
    """Add an uncompleted intent whose file is there to its group (one per fork session id:
    the fork's name holds it, a result file's directory is named after it)."""
    path = intent.get("path")
    if not isinstance(path, str) or not os.path.lexists(path):
        return  # the write failed, or the file was removed since
    role = intent.get("role")
    name = Path(path).parent.name if role == "result" else Path(path).name
    found = SESSION_ID.search(name)
    session_id = found.group(0) if found else path
    group = groups.get(session_id)
    if group is None:
        group = {
            "id": intent.get("id"),
            "kind": UNLOGGED,
            "time": intent.get("time"),
            "session_id": session_id if found else None,
            "fork": None,
            "offloaded": [],
            "files": [],
        }
        groups[session_id] = group
        if group["id"] not in undone:
            forks.append(group)
    group["files"].append(
        {key: intent.get(key) for key in ("path", "role", "size", "sha256")}
        | {"intent": intent.get("id")}
    )
    if role == "fork":
        group["fork"] = path
    else:
        group["offloaded"].append(path)

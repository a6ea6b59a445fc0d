"""The action log: every edit and undo ctxtop performed, one JSON line each, in ``data_dir()``."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.errors import CtxtopError
from engine.paths import data_dir

LOG_NAME = "actions.jsonl"
FORK_KINDS = ("edit", "compact")  # actions that write a fork ``ctxtop undo`` can remove


def log_path() -> Path:
    return data_dir() / LOG_NAME


def record(kind: str, written: Sequence[Path] = (), **fields: Any) -> dict[str, Any]:
    """Append one action (``kind``: "edit", "compact" or "undo") with its inputs and outputs.

    If the log cannot be written, the ``written`` files (the action's new files) are removed
    again, since no undo could find them, and the error says so."""
    entry: dict[str, Any] = {
        "id": uuid.uuid4().hex[:12],
        "kind": kind,
        "time": datetime.now(UTC).isoformat(timespec="seconds"),
        **fields,
    }
    path = log_path()
    line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line  # an earlier line was torn by a full disk: end it first
            # One write of the whole line: appends never interleave. A full disk may take part
            # of it and report the rest only on the next write: a short write is a failure.
            if os.write(fd, line) != len(line):
                raise OSError(errno.ENOSPC, "the disk is full (the line was cut short)")
        finally:
            os.close(fd)
    except OSError as error:
        for written_path in written:
            with contextlib.suppress(OSError):
                written_path.unlink()
        removed = "; its new files were removed" if written else ""
        raise CtxtopError(
            f"{path}: cannot record the {kind} ({error.strerror or error}){removed}"
        ) from None
    return entry


def read_actions() -> list[dict[str, Any]]:
    """All recorded actions, oldest first (unreadable lines are skipped)."""
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
    """Edit (and compact) actions whose fork was written and not undone yet, oldest first."""
    actions = read_actions()
    undone = {a.get("edit_id") for a in actions if a.get("kind") == "undo"}
    return [
        a
        for a in actions
        if a.get("kind") in FORK_KINDS and a.get("fork") and a.get("id") not in undone
    ]

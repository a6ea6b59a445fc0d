"""A session's row from the newest bytes of its file: the sessions table's cheap first row.

``quick_row`` reads the file's first line (where Codex, Gemini CLI and Copilot CLI log the
working directory and session) and its last ``QUICK_BYTES`` (more, doubling up to
``QUICK_MAX_BYTES``, until they hold a request with its usage), feeds them to the agent's
reader in memory and keeps only the row: nothing of the session stays in memory. The context
figure is the one ``ctxtop report`` decides (``context_tokens``, ``context_window``) on what was
read: a file read whole gives report's figure (``figures="quick"``: no forecast or cost yet),
a bigger one the figure of its newest bytes (``figures="tail"``, marked in the table). The
forecast, cost and request count come with the full read, when the row is shown.
"""

from __future__ import annotations

import os
from pathlib import Path

from ctxtop.engine.agents import stored_session
from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.files import open_regular
from ctxtop.engine.live.sessions_row import QUICK, TAIL, SessionRow, quick_figures

QUICK_BYTES = 16 << 10
QUICK_MAX_BYTES = 1 << 20
# The first line is read for the session's own facts only while it is short.
HEAD_BYTES = 64 << 10  # Codex's session_meta holds the base instructions: 20 KB or more


def _read(path: Path, size: int) -> tuple[bytes, bool]:
    """The first line (when short) and the whole lines of the last ``size`` bytes; True when
    that is the whole file."""
    fd = open_regular(path)
    try:
        total = os.fstat(fd).st_size
        if total <= size + HEAD_BYTES:
            return os.pread(fd, total, 0), True
        head = os.pread(fd, HEAD_BYTES, 0)
        end = head.find(b"\n")
        first = head[: end + 1] if end >= 0 else b""
        tail = os.pread(fd, size, total - size)
    finally:
        os.close(fd)
    cut = tail.find(b"\n")
    return first + (tail[cut + 1 :] if cut >= 0 else b""), False


def quick_row(path: Path, home: Path) -> SessionRow | None:
    """The row of ``path`` from its newest bytes, or None when they are no known agent's
    session (yet) or the file cannot be read."""
    if stored_session(path) is not None:
        return _stored_row(path, home)
    size = QUICK_BYTES
    while True:
        try:
            data, whole = _read(path, size)
        except OSError:
            return None
        reader = SessionReader(path, data=data, lean_history=False)
        try:
            state = read_all(reader)
        except CtxtopError:  # no whole record among these bytes yet, or no agent's
            state = None
        last = whole or size >= QUICK_MAX_BYTES
        if state is not None and (last or state.last_response is not None):
            break
        if last:
            return None
        size *= 4
    assert reader.adapter is not None
    return quick_figures(reader.adapter, home, QUICK if whole else TAIL)


def _stored_row(path: Path, home: Path) -> SessionRow | None:
    """A session in an agent's database is read whole (its rows, not the database's bytes)."""
    reader = SessionReader(path)
    try:
        read_all(reader)
    except CtxtopError:
        return None
    assert reader.adapter is not None
    return quick_figures(reader.adapter, home, QUICK)

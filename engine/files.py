"""Opening files the way every reader of ctxtop does: read-only, regular files only, never
blocking (a leaf module: anything may use it)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any


def open_regular(path: Path) -> int:
    """A read-only descriptor of ``path`` if it is a regular file; ``OSError`` otherwise.

    Non-blocking, so that a named pipe under a session's name cannot make ctxtop wait forever
    for a writer (a device or a directory is refused the same way)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return fd


def read_json_object(path: Path, limit: int) -> dict[str, Any]:
    """The JSON object in the first ``limit`` bytes of the regular file ``path`` (an agent's
    settings or metadata file); {} when there is none (missing, unreadable, not an object)."""
    try:
        document = json.loads(read_head(path, limit))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return document if isinstance(document, dict) else {}


def read_head(path: Path, limit: int) -> bytes:
    """Up to ``limit`` bytes from the start of the regular file ``path``; ``OSError`` otherwise."""
    fd = open_regular(path)
    try:
        return os.read(fd, limit)
    finally:
        os.close(fd)


def read_bounded(path: Path, limit: int) -> bytes:
    """The whole regular file ``path`` if it holds at most ``limit`` bytes; ``OSError``
    otherwise (a named pipe, a device such as /dev/zero, or a file that is too big: never
    read past ``limit``)."""
    fd = open_regular(path)
    try:
        if os.fstat(fd).st_size > limit:
            raise OSError(errno.EFBIG, f"larger than {limit:,} bytes", str(path))
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew since
        raise OSError(errno.EFBIG, f"larger than {limit:,} bytes", str(path))
    return data


def replace_file(target: Path, data: bytes) -> None:
    """Write (or replace) ctxtop's own file ``target`` atomically: complete and flushed in a
    temp file of the same directory before it takes the name; ``OSError`` (the temp file
    removed) when it cannot."""
    fd, temp = tempfile.mkstemp(prefix=f".ctxtop-{os.getpid()}-", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def append_line(path: Path, line: bytes) -> None:
    """Append one whole line (ending in a newline) to ``path`` (created 0600, its directory
    too); ``OSError`` when it cannot be written whole."""
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

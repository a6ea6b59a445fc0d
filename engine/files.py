"""Opening files the way every reader of ctxtop does: read-only, regular files only, never
blocking (a leaf module: anything may use it)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


def open_regular(path: Path) -> int:
    """A read-only descriptor of ``path`` if it is a regular file; ``OSError`` otherwise.

    Non-blocking, so that a named pipe under a session's name cannot make ctxtop wait forever
    for a writer (a device or a directory is refused the same way)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return fd


def read_head(path: Path, limit: int) -> bytes:
    """Up to ``limit`` bytes from the start of the regular file ``path``; ``OSError`` otherwise."""
    fd = open_regular(path)
    try:
        return os.read(fd, limit)
    finally:
        os.close(fd)

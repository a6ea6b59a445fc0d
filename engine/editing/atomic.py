"""Atomic, exclusive file creation: a temp file in the target directory, then a hard link.

A fork never replaces an existing file: ``write_new`` fails if the target exists, and a reader
never sees a half-written file (the data is complete and flushed before the name appears).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from engine.errors import CtxtopError
from engine.paths import is_plain_name


def safe_name(name: str) -> str:
    """``name`` if it is a plain file name (no separators, ``..``, NUL, newlines); else error."""
    if not is_plain_name(name):
        raise CtxtopError(f"refusing unsafe file name {name!r}")
    return name


def write_new(directory: Path, name: str, data: bytes) -> Path:
    """Create ``directory/name`` holding ``data``, atomically; error if it already exists."""
    target = directory / safe_name(name)
    handle, temp = tempfile.mkstemp(dir=directory, prefix=".ctxtop-", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, 0o600)
        try:
            os.link(temp, target)  # fails if the target exists: never overwrites
        except FileExistsError:
            raise CtxtopError(f"{target}: already exists, not overwritten") from None
        except OSError:
            if target.exists():
                raise CtxtopError(f"{target}: already exists, not overwritten") from None
            os.replace(temp, target)  # a file system without hard links
    finally:
        if os.path.exists(temp):
            os.unlink(temp)
    return target

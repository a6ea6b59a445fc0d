"""Atomic, exclusive file creation: a temp file in the target directory, then a hard link.

A fork never replaces an existing file: ``write_new`` fails if the target exists, and a reader
never sees a half-written file (the data is complete and flushed before the name appears).
A failure (a full disk, a failed link) leaves no file behind and is a one-line ``CtxtopError``.
"""

from __future__ import annotations

import contextlib
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


def not_written(path: Path, error: OSError) -> CtxtopError:
    return CtxtopError(f"{path}: not written ({error.strerror or error}); nothing was changed")


def write_new(directory: Path, name: str, data: bytes) -> Path:
    """Create ``directory/name`` holding ``data``, atomically; error if it already exists."""
    target = directory / safe_name(name)
    try:
        handle, temp = tempfile.mkstemp(dir=directory, prefix=".ctxtop-", suffix=".tmp")
    except OSError as error:
        raise not_written(target, error) from None
    try:
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temp, 0o600)
        except OSError as error:  # a full disk shows here
            raise not_written(target, error) from None
        _publish(temp, target)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)
    return target


def _publish(temp: str, target: Path) -> None:
    """Give the complete temp file its name, never replacing anything (nor following a link)."""
    try:
        os.link(temp, target, follow_symlinks=False)  # fails if the name is taken
        return
    except FileExistsError:
        raise CtxtopError(f"{target}: already exists, not overwritten") from None
    except OSError:
        pass  # a file system without hard links: claim the name, then rename over the claim
    try:
        claim = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        raise CtxtopError(f"{target}: already exists, not overwritten") from None
    except OSError as error:
        raise not_written(target, error) from None
    os.close(claim)
    try:
        os.replace(temp, target)  # over our own empty claim only
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(target)
        raise not_written(target, error) from None

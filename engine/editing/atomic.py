"""Atomic, exclusive file creation: a temp file in the target directory, then a hard link.

A fork never replaces an existing file: ``write_new`` fails if the target exists, and a reader
never sees a half-written file (the data is complete and flushed before the name appears).
A failure (a full disk, a failed link) leaves no file behind and is a one-line ``CtxtopError``.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
import time
from pathlib import Path

from ctxtop.engine.editing import action_log
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.paths import is_plain_name

# mkstemp's names: the prefix, 8 characters of [a-z0-9_], the suffix (ctxtop's before the pid).
_TEMP_NAME = re.compile(r"\.ctxtop-(?:(?P<pid>[0-9]{1,10})-)?[a-z0-9_]{8}\.tmp")
LEGACY_TEMP_AGE = 3600  # seconds: a pid-less temporary older than this is a dead writer's


def safe_name(name: str) -> str:
    """``name`` if it is a plain file name (no separators, ``..``, NUL, newlines); else error."""
    if not is_plain_name(name):
        raise CtxtopError(f"refusing unsafe file name {name!r}")
    return name


def not_written(path: Path, error: OSError) -> CtxtopError:
    return CtxtopError(f"{path}: not written ({error.strerror or error}); nothing was changed")


def _is_scratch(directory: Path) -> bool:
    """A private scratch directory of ctxtop's (``tempfile`` dirs named ``ctxtop-*``, where it
    writes copies to read back): nothing written there is an action's output."""
    scratch_root = Path(tempfile.gettempdir()).resolve()
    return directory.name.startswith("ctxtop-") and directory.parent == scratch_root


def remove_stale_temps(directory: Path) -> list[Path]:
    """Remove ``.ctxtop-<pid>-*.tmp`` files of ctxtop processes that are gone (and ones of the
    older pid-less naming over an hour old); never anything else."""
    removed: list[Path] = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        found = _TEMP_NAME.fullmatch(name)
        if found is None:
            continue
        path = directory / name
        try:
            info = os.lstat(path)
            if not stat.S_ISREG(info.st_mode):
                continue
            pid = found.group("pid")
            alive = _alive(int(pid)) if pid else time.time() - info.st_mtime < LEGACY_TEMP_AGE
            if not alive:
                path.unlink()
                removed.append(path)
        except OSError:
            continue
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: alive
    return True


def write_new(
    directory: Path,
    name: str,
    data: bytes,
    role: str | None = "fork",
    names: Path | None = None,
) -> Path:
    """Create ``directory/name`` holding ``data``, atomically; error if it already exists.

    ``role``: what ``ctxtop undo`` may remove the file as ("fork", or "result" for a large-result
    file): its absolute path, size and hash are logged before it gets its name, and temporaries
    a killed ctxtop left in ``directory`` are removed first. None (a settings file), or a
    scratch directory: nothing is logged. ``names``: the path an error names instead (a
    scratch copy stands for the fork the user asked for). The returned path is absolute."""
    directory = directory.resolve()
    target = directory / safe_name(name)
    logged = role is not None and not _is_scratch(directory)
    if logged:
        remove_stale_temps(directory)
        action_log.record_intent(target, str(role), data)
    try:
        _write(directory, target, data, names or target)
    except CtxtopError:
        if logged:
            action_log.forget_intent(target)
        raise
    return target


def _write(directory: Path, target: Path, data: bytes, names: Path) -> None:
    try:
        # The pid in the name tells a later run whether the writer is still there.
        prefix = f".ctxtop-{os.getpid()}-"
        handle, temp = tempfile.mkstemp(dir=directory, prefix=prefix, suffix=".tmp")
    except OSError as error:
        raise not_written(names, error) from None
    try:
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temp, 0o600)
        except OSError as error:  # a full disk shows here
            raise not_written(names, error) from None
        _publish(temp, target)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)


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

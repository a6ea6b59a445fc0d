"""The measurements: ``<data dir>/proxy/<session id>.jsonl`` (``unknown.jsonl`` when the agent
sent no session id), one whole JSON line appended per model request, the directory 0700 and the
files 0600. Figures and hashes only: never message text, never a header.

Session ids come from requests, which any local client writes: the directory is bounded
(``MAX_FILES`` sessions, ``MAX_TOTAL_BYTES`` in all, the least recently measured removed first)
and so is each file (past ``MAX_FILE_BYTES`` it keeps its newer half; readers use the newest
lines). 3,000 made-up ids used to make 3,000 files in 3 s."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxtop.engine.files import append_line, open_regular, replace_file
from ctxtop.engine.paths import data_dir, is_plain_name

UNKNOWN = "unknown"
MB = 1024 * 1024
MAX_FILES = 1000
MAX_TOTAL_BYTES = 256 * MB
MAX_FILE_BYTES = 32 * MB  # some 30,000 requests of one session
RECOUNT_EVERY = 1024  # appends between two looks at the directory (other proxies write too)
KEEP = 0.9  # past a bound, the oldest files go until 90 % of it is left


def measurements_dir() -> Path:
    return data_dir() / "proxy"


def measurement_path(session_id: str | None) -> Path:
    name = session_id if session_id and is_plain_name(session_id) else UNKNOWN
    return measurements_dir() / f"{name}.jsonl"


@dataclass
class _Tally:
    """What a directory holds, as last counted plus what was appended since."""

    files: int = 0
    size: int = 0
    appends: int = 0


_tallies: dict[Path, _Tally] = {}
_lock = threading.Lock()


def append_measurement(session_id: str | None, line: dict[str, Any]) -> None:
    """One request's line; ``OSError`` when it cannot be written whole."""
    data = (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    path = measurement_path(session_id)
    with _lock:
        new = not os.path.lexists(path)
        if new:  # a new session (the directory itself may be new)
            _private_directory(path.parent)
        tally = _tallies.get(path.parent)
        if tally is None:
            tally = _tallies[path.parent] = _count(path.parent)
        append_line(path, data)
        tally.files += new
        tally.size += len(data)
        tally.appends += 1
        if os.stat(path).st_size > MAX_FILE_BYTES:
            tally.size -= _keep_newer_half(path)
        if tally.files > MAX_FILES or tally.size > MAX_TOTAL_BYTES:
            _evict(path.parent, keep=path)
            _tallies[path.parent] = _count(path.parent)
        elif tally.appends >= RECOUNT_EVERY:
            _tallies[path.parent] = _count(path.parent)


def _private_directory(directory: Path) -> None:
    """The measurements' directory, created 0700 (its file names are session ids); an older
    ctxtop's 0755 one is narrowed."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    if stat.S_IMODE(directory.stat().st_mode) & 0o077:
        directory.chmod(0o700)


def _files(directory: Path) -> list[tuple[float, int, Path]]:
    """(mtime, size, path) of each measurement file, newest first."""
    found = []
    with os.scandir(directory) as entries:
        for entry in entries:
            if not entry.name.endswith(".jsonl"):
                continue
            with contextlib.suppress(OSError):
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode):
                    found.append((info.st_mtime, info.st_size, Path(entry.path)))
    return sorted(found, key=lambda item: item[0], reverse=True)


def _count(directory: Path) -> _Tally:
    files = _files(directory)
    return _Tally(len(files), sum(size for _, size, _ in files))


def _evict(directory: Path, keep: Path) -> None:
    """Remove the least recently measured files until 90 % of each bound is left."""
    files, size = 0, 0
    for _, file_size, path in _files(directory):
        files, size = files + 1, size + file_size
        if path != keep and (files > MAX_FILES * KEEP or size > MAX_TOTAL_BYTES * KEEP):
            with contextlib.suppress(OSError):
                path.unlink()


def _keep_newer_half(path: Path) -> int:
    """Rewrite ``path`` with the newer half of its lines; the bytes it lost."""
    with open(open_regular(path), "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(size - MAX_FILE_BYTES // 2)
        tail = handle.read()
    tail = tail[tail.find(b"\n") + 1 :]  # from the first whole line on
    replace_file(path, tail)
    return size - len(tail)

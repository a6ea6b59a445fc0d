"""Following a live session: change notification (watchfiles) with a polling fallback.

``wake_ups(reader, stop, ...)`` yields once per change notification or poll interval; the
dashboard's feed runs it in a worker thread and stops it with a ``threading.Event``. Every
wake-up, notified or not, ends in ``reader.poll()``, which reads only the appended bytes, so a
missed or spurious notification costs nothing but a ``stat``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ctxtop.engine.agents.session_reader import SessionReader


def _watched_dirs(reader: SessionReader) -> tuple[Path, ...]:
    """The directories whose changes matter: the session file's own and its companions'.

    Each is watched without recursion (a session file may sit in a big directory tree); a
    companion directory created later is picked up by the periodic poll, then watched.
    """
    dirs = {reader.path.parent}
    adapter = reader.adapter
    if adapter is not None:
        dirs.update(path.parent for path in adapter.companions())
    return tuple(sorted(path for path in dirs if path.is_dir()))


def wake_ups(
    reader: SessionReader, stop: threading.Event, interval: float, use_watchfiles: bool
) -> Iterator[None]:
    """Yields once per wake-up: a change notification or, at the latest, every ``interval``."""
    if use_watchfiles:
        try:
            import watchfiles

            while not stop.is_set():
                dirs = _watched_dirs(reader)
                changes: Iterator[Any] = watchfiles.watch(
                    *dirs,
                    stop_event=stop,
                    debounce=50,
                    step=20,
                    rust_timeout=max(1, int(interval * 1000)),
                    yield_on_timeout=True,
                    raise_interrupt=False,
                    recursive=False,
                )
                for _ in changes:
                    yield None
                    if _watched_dirs(reader) != dirs:
                        break  # a companion appeared in a new directory: watch it too
            return
        except (ImportError, OSError, RuntimeError):
            pass  # no notification backend here: poll
    while not stop.is_set():
        stop.wait(interval)
        yield None

"""Following a live session: change notification (watchfiles) with a polling fallback.

The engine API is a plain iterator, ``follow(reader)``, that yields the state after the first
read and after every change; ``follow_with(reader, callback)`` is the callback form. The TUI runs
either in a worker thread and stops it with a ``threading.Event``; tests drive ``reader.poll()``
directly. Every wake-up, notified or not, ends in ``reader.poll()``, which reads only the appended
bytes, so a missed or spurious notification costs nothing but a ``stat``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from engine.agents import written
from engine.agents.session_reader import SessionReader, read_all
from engine.sessions.model import SessionState

DEFAULT_POLL_INTERVAL = 0.5


def _watched_dirs(reader: SessionReader) -> tuple[Path, ...]:
    """The directories whose changes matter: the session file's own and its companions'.

    Each is watched without recursion (a session file may sit in a big directory tree); a
    companion directory created later is picked up by the periodic poll, then watched.
    """
    # A session in a database (<database>/<id>): the database's directory (its WAL changes).
    dirs = {reader.path.parent.parent if reader.stored else reader.path.parent}
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


def follow(
    reader: SessionReader,
    *,
    stop: threading.Event | None = None,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
    use_watchfiles: bool = True,
) -> Iterator[SessionState]:
    """The session's state now, then again after every change, until ``stop`` is set.

    A file that does not exist yet or is still empty is waited for; one that holds something
    no adapter recognises raises ``InputError`` at once.
    """
    stop = stop or threading.Event()
    if _has_content(reader.path) or reader.path.is_dir():
        yield read_all(reader)
    for _ in wake_ups(reader, stop, poll_interval, use_watchfiles):
        if stop.is_set():
            return
        known = reader.state is not None
        changed = False
        while reader.poll():  # drain: companions found on one poll are read by the next
            changed = True
        state = reader.state
        if state is not None and (changed or not known):
            yield state


def _has_content(path: Path) -> bool:
    try:
        return written(path)[1] > 0
    except OSError:
        return False


def follow_with(
    reader: SessionReader,
    callback: Callable[[SessionState], None],
    *,
    stop: threading.Event | None = None,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
    use_watchfiles: bool = True,
) -> None:
    """Call ``callback(state)`` after the first read and after every change (blocks)."""
    for state in follow(
        reader, stop=stop, poll_interval=poll_interval, use_watchfiles=use_watchfiles
    ):
        callback(state)


def poll_forever(reader: SessionReader, stop: threading.Event, interval: float) -> Iterator[float]:
    """Plain polling, yielding the seconds each poll took (for benchmarks and tests)."""
    while not stop.is_set():
        started = time.perf_counter()
        reader.poll()
        yield time.perf_counter() - started
        stop.wait(interval)

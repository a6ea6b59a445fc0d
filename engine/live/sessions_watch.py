"""Keeping the sessions table current: change notifications on the agents' session directories
(watchfiles, recursive), with polling as the fallback.

``watch_rows(table, stop)`` yields the rows after the first listing, then after each wake-up
that changed them, and at least every ``heartbeat`` seconds (the "last activity" ages move on).
A wake-up reads only the sessions whose files were notified; polling (no notification backend)
checks each tracked session's ``mtime`` and lists the directories again every
``RESCAN_SECONDS`` to find new sessions.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ctxtop.engine.live.sessions_row import SessionRow
from ctxtop.engine.live.sessions_table import SessionsTable

TICK_SECONDS = 1.0  # how often states (idle, quiet) are looked at without a change
# Rows are yielded at least this often, so "last activity" moves on (in steps of 10 s).
HEARTBEAT_SECONDS = 10.0
RESCAN_SECONDS = 30.0  # polling only: how often new session files are looked for
# Rows not read yet are read for at most this long before the first rows are yielded, and
# then in slices of ``FILL_SECONDS`` between wake-ups (a change waits at most that long; a
# wake-up without one waits ``interval``, and each slice's rows are yielded: not too often).
FIRST_SECONDS = 2.0
FILL_SECONDS = 3.0


def _notified(
    table: SessionsTable, stop: threading.Event, interval: float
) -> Iterator[set[Path] | None]:
    """Sets of changed paths (empty on a timeout); None once notifications are unavailable."""
    try:
        import watchfiles
    except ImportError:
        yield None
        return
    while not stop.is_set():
        roots = table.watched()
        if not roots:
            stop.wait(interval)  # no agent directory yet: look again for one
            yield set()
            continue
        try:
            changes: Iterator[set[tuple[Any, str]]] = watchfiles.watch(
                *roots,
                stop_event=stop,
                debounce=50,
                step=20,
                rust_timeout=max(1, int(interval * 1000)),
                yield_on_timeout=True,
                # ctrl+c ends the watch and the command (not just this batch of notifications).
                raise_interrupt=True,
                recursive=True,
            )
            for batch in changes:
                yield changed_paths(batch)
                if table.watched() != roots:
                    break  # an agent's directory appeared (or went): watch the new set
        except (OSError, RuntimeError):
            yield None
            return


def changed_paths(batch: Iterable[tuple[Any, str]]) -> set[Path]:
    """The paths of one batch of notifications, and the files in a directory the batch says
    was added: a file written into a new directory before the watch on it was in place (a
    new project's first session) is notified to nobody, so it is looked for there."""
    from watchfiles import Change

    paths: set[Path] = set()
    for change, name in batch:
        path = Path(name)
        paths.add(path)
        if change == Change.added and path.is_dir():
            with contextlib.suppress(OSError):
                paths.update(child for child in path.rglob("*") if child.is_file())
    return paths


def _polled(stop: threading.Event, interval: float) -> Iterator[None]:
    while not stop.is_set():
        stop.wait(interval)
        yield None


def watch_rows(
    table: SessionsTable,
    stop: threading.Event | None = None,
    *,
    interval: float = TICK_SECONDS,
    heartbeat: float = HEARTBEAT_SECONDS,
    use_watchfiles: bool = True,
) -> Iterator[tuple[SessionRow, ...]]:
    """The table's rows now, then again whenever they change (or ``heartbeat`` passed)."""
    stop = stop or threading.Event()
    table.start(FIRST_SECONDS)
    rows = table.rows()
    shown_at = time.monotonic()
    yield rows
    wake_ups: Iterator[set[Path] | None] = (
        _notified(table, stop, interval) if use_watchfiles else _polled(stop, interval)
    )
    rescanned = time.monotonic()
    first = True
    while not stop.is_set():
        paths = next(wake_ups, None)
        if stop.is_set():
            return
        if first and paths is not None:
            # A file written between the first listing and the watch's start was notified to
            # nobody: list once more, and look at each one's mtime, now that the watch is in
            # place (ten thousand sessions take seconds to watch).
            table.rescan()
            table.poll_all()
            first = False
        if paths is None:  # polling: no notification backend, or it failed
            if use_watchfiles:
                wake_ups, use_watchfiles = _polled(stop, interval), False
            table.poll_all()
            if time.monotonic() - rescanned > RESCAN_SECONDS:
                table.rescan()
                rescanned = time.monotonic()
        elif paths:
            table.changed(paths)
        if table.pending():
            table.fill(FILL_SECONDS)
        table.tick()
        now_rows = table.rows()
        if now_rows != rows or time.monotonic() - shown_at >= heartbeat:
            rows, shown_at = now_rows, time.monotonic()
            yield rows

"""OpenCode's database read as a log: the rows of one session that are new or changed since the
last read, one JSON line each, for the line-based reader (engine/agents/session_reader.py).

OpenCode (1.2 and later) keeps every session in one SQLite file, ``opencode.db``, in WAL mode,
and rewrites a message's or part's row in place as it streams (``time_updated`` moves on). A
session is named as if it were a file inside the database, ``<opencode.db>/<session id>``. Each
read:

- looks at the database and its ``-wal`` file first, and queries nothing when neither changed;
- opens the file read-only for that read only (an ``?mode=ro`` URI: never a write lock, never
  a checkpoint, and nothing held between reads, so the agent writing the same file is never
  kept waiting nor kept from cleaning up its WAL when it exits). A database without its
  ``-wal`` file has no writer (OpenCode holds one open while it runs): it is opened as
  ``immutable``, since a read-only connection would leave an empty ``-wal`` and a ``-shm``
  beside it;
- takes the session's rows, and its sub-agents' (child sessions), whose ``time_updated`` is at
  least the newest seen so far, and hands out those whose content changed, each message
  followed by its parts (the order OpenCode sends them to the model);
- starts over (``Batch.reset``) when rows went away (a revert, a retried compaction), since a
  row cannot be taken back from the reader.

A line is ``{"opencode": "session" | "message" | "part", <columns>, "data": <the row's JSON>}``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from ctxtop.engine.sessions.tail import Batch, LineTailer

# A row whose ``time_updated`` is this many milliseconds before the newest seen is asked for
# again (clocks of two OpenCode processes writing one file need not agree to the millisecond).
OVERLAP_MS = 2000

# The session columns handed out: what the reader shows and what a fork's export holds
# (``slug`` and later are the session's own settings; a column an older database lacks is None).
_SESSION_COLUMNS = (
    "id",
    "parent_id",
    "title",
    "version",
    "directory",
    "time_created",
    "slug",
    "agent",
    "model",
    "permission",
)

_TREE = """WITH RECURSIVE tree(id) AS (
    SELECT id FROM session WHERE id = ?
    UNION SELECT session.id FROM session JOIN tree ON session.parent_id = tree.id)"""


def split_address(path: Path) -> tuple[Path, str] | None:
    """(database file, session id) for ``<file>.db/<session id>``, else None (a string test:
    nothing is opened)."""
    if path.parent.suffix != ".db" or not path.name:
        return None
    return path.parent, path.name


def address(database: Path, session_id: str) -> Path:
    return database / session_id


def wal_of(database: Path) -> Path:
    return database.with_name(database.name + "-wal")


def connect(database: Path) -> sqlite3.Connection:
    """A read-only connection (``OSError`` when the file is missing or is no database); close
    it after the read."""
    if not database.is_file():
        raise FileNotFoundError(2, "no such database", str(database))
    how = "mode=ro" if wal_of(database).exists() else "immutable=1"
    uri = f"{database.resolve().as_uri()}?{how}"  # file:///C:/… on Windows too
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=0.5)
        connection.execute("SELECT 1 FROM session LIMIT 1").fetchall()
    except sqlite3.Error as error:
        raise OSError(0, f"not an OpenCode database ({error})", str(database)) from error
    return connection


def stamp(database: Path) -> tuple[int, int, int, int]:
    """Sizes and modification times of the database and its WAL (0 for a file not there)."""
    values: list[int] = []
    for path in (database, wal_of(database)):
        try:
            info = os.stat(path)
            values += [info.st_size, info.st_mtime_ns]
        except OSError:
            values += [0, 0]
    return values[0], values[1], values[2], values[3]


class RowTailer(LineTailer):
    """A ``LineTailer`` over one OpenCode session in its database (see the module's text)."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(path, clock)
        found = split_address(path)
        if found is None:
            raise ValueError(f"{path}: not <opencode.db>/<session id>")
        self.database, self.session_id = found
        self._stamp: tuple[int, int, int, int] | None = None
        self._seen: dict[str, int] = {}  # row id → hash of what was handed out
        self._rows = {"session": 0, "message": 0, "part": 0}  # rows handed out per table
        self._newest = 0  # the newest time_updated handed out (ms)

    def restart(self) -> None:
        super().restart()
        self._stamp = None
        self._seen.clear()
        self._rows = dict.fromkeys(self._rows, 0)
        self._newest = 0

    def start_near_end(self, nbytes: int) -> bool:
        return False  # rows are read whole: a session's rows are few

    def read(self, limit: int | None = None) -> Batch:
        batch = Batch()
        now = stamp(self.database)
        if now == self._stamp:
            return batch
        connection = connect(self.database)
        try:
            rows = self._changed_rows(connection)
        except sqlite3.Error as error:
            raise OSError(0, f"cannot read the database ({error})", str(self.database)) from error
        finally:
            connection.close()
        if rows is None:  # rows went away: the caller starts over
            self.restart()
            batch.reset = True
            return batch
        self._stamp = now
        for raw in rows:
            self.line_no += 1
            self.offset += len(raw) + 1
            batch.bytes_read += len(raw) + 1
            batch.lines.append((self.line_no, raw))
        return batch

    def _changed_rows(self, db: sqlite3.Connection) -> list[bytes] | None:
        """The lines of rows new or changed since the last read (None: some were deleted)."""
        since = max(self._newest - OVERLAP_MS, 0)
        tree = f"{_TREE} SELECT id FROM tree"
        with db:  # one read transaction: the three tables as of one moment
            db.execute("BEGIN")
            found = db.execute(
                f"{_TREE} SELECT * FROM session WHERE id IN tree", (self.session_id,)
            )
            columns = [column[0] for column in found.description]
            sessions = [dict(zip(columns, row, strict=True)) for row in found.fetchall()]
            if not sessions:
                raise sqlite3.OperationalError(f"no session {self.session_id}")
            counts = db.execute(
                f"SELECT (SELECT count(*) FROM message WHERE session_id IN ({tree})),"
                f" (SELECT count(*) FROM part WHERE session_id IN ({tree}))",
                (self.session_id, self.session_id),
            ).fetchone()
            messages = db.execute(
                f"SELECT id, session_id, time_created, time_updated, data FROM message"
                f" WHERE session_id IN ({tree}) AND time_updated >= ?",
                (self.session_id, since),
            ).fetchall()
            parts = db.execute(
                f"SELECT id, message_id, session_id, time_created, time_updated, data FROM part"
                f" WHERE session_id IN ({tree}) AND time_updated >= ?",
                (self.session_id, since),
            ).fetchall()
        if len(sessions) < self._rows["session"] or counts[0] < self._rows["message"]:
            return None
        if counts[1] < self._rows["part"]:
            return None
        lines: list[tuple[tuple[str, int, str], bytes]] = []
        for session in sessions:
            head = {name: session.get(name) for name in _SESSION_COLUMNS}
            row_id, updated = str(session["id"]), session.get("time_updated")
            updated = updated if isinstance(updated, int) else 0
            self._take(lines, "session", row_id, updated, ("", 0, row_id), head, None)
        for row in messages:
            head = {"id": row[0], "session_id": row[1], "time_created": row[2]}
            self._take(lines, "message", row[0], row[3], (row[0], 1, ""), head, row[4])
        for row in parts:
            head = {
                "id": row[0],
                "message_id": row[1],
                "session_id": row[2],
                "time_created": row[3],
            }
            self._take(lines, "part", row[0], row[4], (row[1], 2, row[0]), head, row[5])
        lines.sort(key=lambda item: item[0])
        return [raw for _, raw in lines]

    def _take(
        self,
        lines: list[tuple[tuple[str, int, str], bytes]],
        table: str,
        row_id: str,
        updated: int,
        order: tuple[str, int, str],
        head: dict[str, object],
        data: str | bytes | None,
    ) -> None:
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        fingerprint = hash((updated, text, tuple(head.values())))
        if self._seen.get(row_id) == fingerprint:
            return
        if row_id not in self._seen:
            self._rows[table] += 1
        self._seen[row_id] = fingerprint
        self._newest = max(self._newest, updated)
        head = {"opencode": table, **head, "time_updated": updated}
        raw = json.dumps(head, ensure_ascii=False)
        if text is not None:
            raw = f'{raw[:-1]}, "data": {text}}}'
        lines.append((order, raw.encode("utf-8")))

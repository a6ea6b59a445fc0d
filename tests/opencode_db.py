"""OpenCode's database for tests: the bundled sample (a SQL dump of the tables session, message
and part the real CLI wrote, sample_sessions/opencode/) loaded into a fresh SQLite file in WAL
mode, as OpenCode keeps it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

SAMPLES = Path(__file__).resolve().parents[1] / "sample_sessions" / "opencode"
DUMP = SAMPLES / "opencode_main.sql"
SERVER_USAGE = SAMPLES / "server_usage.log"
SESSION = "ses_ddb0f7e05ffe7K6znNILzs3iM4"
SUBAGENT = "ses_ddb0ef75fffeasZywkw3SxMGmK"


def writer(database: Path) -> sqlite3.Connection:
    """A connection that writes as OpenCode does (WAL mode)."""
    connection = sqlite3.connect(database, isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    return connection


def load_sample(database: Path) -> Path:
    """The sample loaded into ``database`` (created); returns the session's address."""
    database.parent.mkdir(parents=True, exist_ok=True)
    connection = writer(database)
    connection.executescript(DUMP.read_text(encoding="utf-8"))
    connection.close()
    return session_path(database)


def session_path(database: Path, session_id: str = SESSION) -> Path:
    return database / session_id


def schema_only(database: Path) -> sqlite3.Connection:
    """An empty database with the sample's tables, and a connection writing to it."""
    connection = writer(database)
    for statement in DUMP.read_text(encoding="utf-8").split(";\n"):
        if statement.lstrip().startswith(("CREATE TABLE", "CREATE INDEX")):
            connection.execute(statement)
    return connection


def sample_rows(table: str) -> list[tuple[Any, ...]]:
    """The rows of one of the sample's tables, oldest first."""
    memory = sqlite3.connect(":memory:")
    memory.executescript(DUMP.read_text(encoding="utf-8"))
    rows = memory.execute(f"SELECT * FROM {table} ORDER BY time_created, id").fetchall()
    memory.close()
    return rows


def server_usage() -> list[dict[str, Any]]:
    """The scripted model server's own record of every request it answered."""
    lines = SERVER_USAGE.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]

"""The measurements: ``<data dir>/proxy/<session id>.jsonl`` (``unknown.jsonl`` when the agent
sent no session id), one whole JSON line appended per model request, the file 0600. Figures and
hashes only: never message text, never a header."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.files import append_line, open_regular
from engine.paths import data_dir, is_plain_name

UNKNOWN = "unknown"


def measurements_dir() -> Path:
    return data_dir() / "proxy"


def measurement_path(session_id: str | None) -> Path:
    name = session_id if session_id and is_plain_name(session_id) else UNKNOWN
    return measurements_dir() / f"{name}.jsonl"


def append_measurement(session_id: str | None, line: dict[str, Any]) -> None:
    """One request's line; ``OSError`` when it cannot be written whole."""
    data = (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    append_line(measurement_path(session_id), data)


def read_measurements(session_id: str) -> list[dict[str, Any]]:
    """The session's lines, oldest first (a torn or unreadable line is skipped; no file: [])."""
    try:
        with open(open_regular(measurement_path(session_id)), "rb") as handle:
            raw = handle.read()
    except OSError:
        return []
    lines = []
    for text in raw.split(b"\n"):
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if isinstance(value, dict):
            lines.append(value)
    return lines

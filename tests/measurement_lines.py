"""The proxy's measurement lines of a session, read whole (ctxtop itself reads only the tail:
engine/proxy/measured_prompt.py, engine/live/live_status.py)."""

from __future__ import annotations

import json
from typing import Any

from ctxtop.engine.files import open_regular
from ctxtop.engine.proxy.store import measurement_path


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

"""OpenCode's export format, the file ``opencode export <id>`` writes and ``opencode import
<file>`` reads: ``{"info": <session>, "messages": [{"info": <message>, "parts": [<part>]}]}``,
where a message is its row's ``data`` with ``id`` and ``sessionID``, and a part its row's
``data`` with ``id``, ``sessionID`` and ``messageID`` (OpenCode 1.18.33: ``cli/cmd/export.ts``,
``cli/cmd/import.ts``). Import keeps the ids it is given and skips a message or part whose id
is in the database already, so a fork takes new ids throughout.

Ids are OpenCode's (``id/id.ts``): ``<prefix>_`` then 6 bytes of ``milliseconds * 4096 +
counter`` in hex (all bits inverted for a descending id: sessions, newest first) then 14
random base-62 characters. Messages and parts are ordered by id, so a fork's new ids ascend
in the order of the ones they replace.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_LOW_48_BITS = (1 << 48) - 1


def opencode_id(prefix: str, milliseconds: int, counter: int, descending: bool = False) -> str:
    value = milliseconds * 4096 + counter
    if descending:
        value = ~value
    stamp = (value & _LOW_48_BITS).to_bytes(6, "big").hex()
    return f"{prefix}_{stamp}" + "".join(secrets.choice(_BASE62) for _ in range(14))


def new_session_id() -> str:
    return opencode_id("ses", int(time.time() * 1000), 1, descending=True)


class AscendingIds:
    """New message and part ids, each later than the one before (as OpenCode makes them)."""

    def __init__(self) -> None:
        self.milliseconds = int(time.time() * 1000)
        self.counter = 0

    def next(self, prefix: str) -> str:
        self.counter += 1
        return opencode_id(prefix, self.milliseconds, self.counter)


def is_export(record: Any) -> bool:
    """Whether ``record`` is an export document (its session ``info`` and ``messages``)."""
    if not isinstance(record, dict) or not isinstance(record.get("messages"), list):
        return False
    info = record.get("info")
    return isinstance(info, dict) and str(info.get("id", "")).startswith("ses_")


@dataclass(slots=True)
class StoredMessage:
    """One message of a session as its rows hold it: the ``data`` of its row and of its parts,
    by part id."""

    id: str
    data: dict[str, Any]
    parts: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(slots=True)
class StoredSession:
    """One session from the reader's row lines (engine/agents/opencode/rows.py), or from an
    export file: its row and its messages in id order (a sub-agent's rows, in the same lines,
    are left out)."""

    row: dict[str, Any]
    messages: list[StoredMessage]

    @classmethod
    def of(cls, records: list[Any], session_id: str) -> StoredSession:
        row: dict[str, Any] = {"id": session_id}
        messages: dict[str, StoredMessage] = {}
        parts: list[Mapping[str, Any]] = []
        exported = next((record for record in records if is_export(record)), None)
        if exported is not None:  # an export file (a fork ctxtop wrote): its rows
            session_id = row["id"] = exported["info"]["id"]
            records = list(export_rows(exported))
        for record in records:
            if not isinstance(record, dict) or not isinstance(record.get("id"), str):
                continue
            table = record.get("opencode")
            if table == "session" and record["id"] == session_id:
                row = record
            elif record.get("session_id") != session_id or not isinstance(record.get("data"), dict):
                continue
            elif table == "message":
                messages[record["id"]] = StoredMessage(record["id"], record["data"])
            elif table == "part":
                parts.append(record)
        for part in parts:
            owner = messages.get(str(part.get("message_id")))
            if owner is not None:
                owner.parts[part["id"]] = part["data"]
        return cls(row, [messages[key] for key in sorted(messages)])

    def tool_parts(self) -> Iterator[tuple[StoredMessage, dict[str, Any]]]:
        """Each message's tool parts, in the order OpenCode sends them."""
        for message in self.messages:
            for key in sorted(message.parts):
                part = message.parts[key]
                if part.get("type") == "tool" and isinstance(part.get("state"), dict):
                    yield message, part


def _json_column(value: Any) -> Any:
    """A JSON text column (``model``, ``permission``) decoded; None when it is not JSON."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return None


def session_info(row: Mapping[str, Any], session_id: str) -> dict[str, Any]:
    """The export's ``info`` for the session ``row`` under ``session_id``: what import requires
    (its project and directory are the importing one's) and the session's own agent, model
    and permissions, so the resumed fork runs as the session did."""
    created = row.get("time_created") if isinstance(row.get("time_created"), int) else 0
    info: dict[str, Any] = {
        "id": session_id,
        "slug": row.get("slug") if isinstance(row.get("slug"), str) else "ctxtop-fork",
        "projectID": "global",
        "directory": row.get("directory") if isinstance(row.get("directory"), str) else "",
        "title": row.get("title") if isinstance(row.get("title"), str) else "ctxtop fork",
        "version": row.get("version") if isinstance(row.get("version"), str) else "",
        "time": {"created": created, "updated": int(time.time() * 1000)},
    }
    for key in ("agent", "model", "permission"):
        value = _json_column(row.get(key)) if key != "agent" else row.get(key)
        if value is not None:
            info[key] = value
    return info


def export_rows(document: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """An export document as the reader's row lines (a session line, then each message
    followed by its parts), so that a fork reads back as the database would hold it."""
    info = document["info"]
    session_id = info["id"]
    times = info.get("time") if isinstance(info.get("time"), Mapping) else {}
    yield {
        "opencode": "session",
        "id": session_id,
        "parent_id": info.get("parentID"),
        "title": info.get("title"),
        "version": info.get("version"),
        "directory": info.get("directory"),
        "time_created": times.get("created"),
    }
    for entry in document["messages"]:
        message = entry.get("info") if isinstance(entry, Mapping) else None
        if not isinstance(message, Mapping):
            continue
        message_id = message.get("id")
        yield {
            "opencode": "message",
            "id": message_id,
            "session_id": session_id,
            "data": {k: v for k, v in message.items() if k not in ("id", "sessionID")},
        }
        for part in entry.get("parts") or []:
            if isinstance(part, Mapping):
                yield {
                    "opencode": "part",
                    "id": part.get("id"),
                    "message_id": message_id,
                    "session_id": session_id,
                    "data": {
                        k: v for k, v in part.items() if k not in ("id", "sessionID", "messageID")
                    },
                }

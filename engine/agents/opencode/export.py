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

import secrets
import time
from collections.abc import Iterator, Mapping
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

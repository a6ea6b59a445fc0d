"""Whose session a model request belongs to, from what the agent sends with it.

- the headers each agent declares (``ProxyUse.session_headers`` in its plugin), in registry
  order, then generic ``session_id``-like ones;
- Claude Code also puts its session id (the name of its ``<session>.jsonl``) in the Messages
  body's ``metadata.user_id`` (2.1.x: a JSON object with a ``session_id``; older releases:
  ``user_<hash>_account_<uuid>_session_<uuid>``);
- else nothing (the measurements go to ``unknown``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from engine.agents import proxied
from engine.paths import is_plain_name

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_SESSION_IN_USER_ID = re.compile(rf"session_({_UUID})")
_HEADERS = tuple(
    dict.fromkeys(
        [
            *(name for use in proxied() for name in use.session_headers),
            "x-session-id",
            "conversation_id",
        ]
    )
)


def _from_user_id(user_id: str) -> str | None:
    found = _SESSION_IN_USER_ID.search(user_id)
    if found:
        return found.group(1)
    if user_id.startswith("{"):
        try:
            value = json.loads(user_id)
        except ValueError:
            return None
        session = value.get("session_id") if isinstance(value, dict) else None
        return session if isinstance(session, str) else None
    return None


def session_id(headers: Mapping[str, str], body: Any) -> str | None:
    """The agent's session id for this request (a header's, else the body's metadata), or
    None; only a plain file-name-safe id (it names the measurement file)."""
    found = header_session_id(headers)
    metadata = body.get("metadata") if isinstance(body, dict) else None
    user_id = metadata.get("user_id") if isinstance(metadata, dict) else None
    if found is None and isinstance(user_id, str):
        found = _from_user_id(user_id)
    return found if found is not None and is_plain_name(found) else None


def header_session_id(headers: Mapping[str, str]) -> str | None:
    """The session id a header carries (no need to decode the body), or None."""
    lowered = {key.lower(): value for key, value in headers.items()}
    found = next((lowered[name] for name in _HEADERS if lowered.get(name)), None)
    return found if found is not None and is_plain_name(found) else None


def session_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The headers that may name the session (what ``session_id`` reads): the rest, keys and
    auth among them, never leave the proxy's request handling."""
    return {key: value for key, value in headers.items() if key.lower() in _HEADERS}

"""Whose session a model request belongs to, from what the agent sends with it.

- the headers each agent declares (``ProxyUse.session_headers`` in its plugin), in registry
  order, then generic ``session_id``-like ones;
- else where an agent puts it in the request's body (``ProxyUse.session_in_body``);
- else nothing (the measurements go to ``unknown``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxtop.engine.agents import proxied
from ctxtop.engine.paths import is_plain_name

_HEADERS = tuple(
    dict.fromkeys(
        [
            *(name for use in proxied() for name in use.session_headers),
            "x-session-id",
            "conversation_id",
        ]
    )
)
_IN_BODY = tuple(use.session_in_body for use in proxied() if use.session_in_body is not None)


def session_id(headers: Mapping[str, str], body: Any) -> str | None:
    """The agent's session id for this request (a header's, else the body's), or
    None; only a plain file-name-safe id (it names the measurement file)."""
    found = header_session_id(headers)
    for in_body in _IN_BODY:
        found = found if found is not None else in_body(body)
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

"""The hook live apply registers on: before a model request is forwarded, the rewriter may
replace its body. ``None`` forwards the agent's bytes unchanged."""

from __future__ import annotations

import threading
from collections.abc import Callable

# (protocol, session id or None, the request body as the agent sent it) -> new body, or None.
# It runs in a worker thread. A rewriter may also have ``active(session_id) -> bool``: a cheap
# check (a stat at most: it runs on the proxy's loop) that it would rewrite that session's
# requests at all; when it says False the request goes on without a hop to a thread.
Rewriter = Callable[[str, str | None, bytes], bytes | None]


class RewriteHook:
    """The current rewriter, set and cleared from any thread; read once per request."""

    def __init__(self, rewriter: Rewriter | None = None) -> None:
        self._lock = threading.Lock()
        self._rewriter = rewriter

    def set(self, rewriter: Rewriter | None) -> None:
        with self._lock:
            self._rewriter = rewriter

    def current(self) -> Rewriter | None:
        with self._lock:
            return self._rewriter


def rewritten(
    rewriter: Rewriter | None, protocol: str, session_id: str | None, body: bytes
) -> tuple[bytes, str | None]:
    """The body to send and, when the rewriter failed, the name of its error (the agent's own
    bytes are sent then: a faulty rewriter never stops the agent)."""
    if rewriter is None:
        return body, None
    try:
        new = rewriter(protocol, session_id, body)
    except Exception as error:  # any fault of the rewriter: forward the original
        return body, type(error).__name__
    if new is None:
        return body, None
    if not isinstance(new, bytes):
        return body, "RewriterReturnedNotBytes"
    return new, None

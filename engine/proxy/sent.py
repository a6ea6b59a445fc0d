"""``Sent``: one model request as the agent sent it and as it went upstream, and its
measurement line (the figures of the body sent and of the answer, never message text), made
in the measuring thread (``measurer``). It keeps only the headers that may name the session:
never a key."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ctxtop.engine.proxy.composition import measure
from ctxtop.engine.proxy.content_coding import decoded
from ctxtop.engine.proxy.rewrite_common import decode
from ctxtop.engine.proxy.routes import Route
from ctxtop.engine.proxy.session_id import session_headers, session_id
from ctxtop.engine.proxy.tally import TextCounts


@dataclass
class Sent:
    """One model request as the agent sent it and as it went upstream."""

    route: Route
    path: str
    headers: dict[str, str]
    agent_body: bytes  # the bytes the agent sent (compressed, if it compressed them)
    limit: int  # the largest body decoded (a compressed one may expand a thousandfold)
    body: bytes = b""  # the bytes forwarded
    session_id: str | None = None  # known before forwarding when a rewriter needed it
    rewrite_error: str | None = None
    encoding: str | None = None  # the agent's Content-Encoding

    def __post_init__(self) -> None:
        self.body = self.body or self.agent_body
        lowered = {key.lower(): value for key, value in self.headers.items()}
        self.encoding = self.encoding or lowered.get("content-encoding")
        self.headers = session_headers(self.headers)  # the session's id, never a key

    def plain(self, body: bytes) -> bytes | None:
        """``body`` (the agent's or the one forwarded) without its content coding, or None
        when ctxtop cannot decode it."""
        return decoded(body, self.encoding, self.limit) if self.encoding else body

    def json(self, body: bytes) -> Any:
        """``body``'s JSON, or None when it is not JSON or cannot be decoded."""
        plain = self.plain(body)
        return decode(plain) if plain is not None else None

    @property
    def rewritten(self) -> bool:
        return self.body is not self.agent_body

    def figures(self, counts: TextCounts | None = None) -> dict[str, Any]:
        """The measurement line's figures: the composition of what went upstream (``counts``:
        the token counts of texts seen before), under the session id the agent's own body
        gave."""
        decoded = self.json(self.body)  # None: unreadable (forwarded all the same)
        line: dict[str, Any] = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "protocol": self.route.protocol,
            "path": self.path,
            "session_id": self.session_id or session_id(self.headers, decoded),
            "request_bytes": len(self.body),
            "sent_sha256": hashlib.sha256(self.body).hexdigest(),
            "rewritten": self.rewritten,
        }
        if self.rewritten:
            line["agent_sha256"] = hashlib.sha256(self.agent_body).hexdigest()
        if self.rewrite_error:
            line["rewrite_error"] = self.rewrite_error
        line.update(measure(self.route.protocol, decoded, counts))
        if isinstance(decoded, dict):
            line["model"] = str(decoded.get("model") or "") or None
            line["stream"] = bool(decoded.get("stream")) or self.route.streamed_by_path
        return line

    def line(self, answer: dict[str, Any], counts: TextCounts | None = None) -> dict[str, Any]:
        """The whole measurement line: the figures, then ``answer`` (the exchange's status,
        outcome, usage and timings)."""
        line = self.figures(counts)
        line.update(answer)
        return line

"""Which provider API a request is for, from its path and headers, and whether it is a model
request (measured and offered to the rewriter) or a side request (forwarded as is). Paths of no
known API are refused: the proxy forwards only to its configured upstreams."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

# The protocol strings the rewriter and the measurements see.
ANTHROPIC = "anthropic"
OPENAI_RESPONSES = "openai-responses"
OPENAI_CHAT = "openai-chat"
GEMINI = "gemini"
PROTOCOLS = (ANTHROPIC, OPENAI_RESPONSES, OPENAI_CHAT, GEMINI)
# The upstream each protocol goes to (both OpenAI APIs share one).
UPSTREAM_OF = {
    ANTHROPIC: "anthropic",
    OPENAI_RESPONSES: "openai",
    OPENAI_CHAT: "openai",
    GEMINI: "gemini",
}
_GEMINI_CALL = re.compile(r"^/v1(beta|alpha)?\d*/models/[^/]+:(stream)?[gG]enerateContent$")


@dataclass(frozen=True, slots=True)
class Route:
    upstream: str  # "anthropic" | "openai" | "gemini"
    protocol: str  # one of PROTOCOLS (a side request: its upstream's main protocol)
    model_call: bool  # a model request: measured and offered to the rewriter
    streamed_by_path: bool = False  # Gemini's streamGenerateContent


def route_of(method: str, path: str, headers: Mapping[str, str]) -> Route | None:
    """The route of a request, or None for a path of no known API."""
    post = method == "POST"
    lowered = {key.lower() for key in headers}
    if path.startswith(("/v1beta/", "/v1alpha/")) or "x-goog-api-key" in lowered:
        call = bool(_GEMINI_CALL.match(path))
        return Route("gemini", GEMINI, post and call, ":streamGenerateContent" in path)
    if path.startswith("/v1/messages") or "anthropic-version" in lowered:
        return Route("anthropic", ANTHROPIC, post and path == "/v1/messages")
    if path.startswith("/v1/chat/completions"):
        return Route("openai", OPENAI_CHAT, post and path == "/v1/chat/completions")
    if path.startswith("/v1/"):
        return Route("openai", OPENAI_RESPONSES, post and path == "/v1/responses")
    return None

"""Which provider API a request is for, from its path, and whether it is a model request
(measured and offered to the rewriter) or a side request (forwarded as is). Paths of no known API
are refused: the proxy forwards only to its configured upstreams.

The path decides the API. A header only one API defines (``anthropic-version``,
``x-goog-api-key``, ``openai-organization`` ...) never sends a request to another upstream: on a
path of another API it is a mismatch, refused (the request would carry one provider's key to the
other); on a path two APIs share (``/v1/models``) it tells them apart."""

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
_GEMINI_CALL = re.compile(r"^/v1(beta|alpha)?\d*/models/[^/]+:(stream)?[gG]enerateContent$")
# A Gemini method on a model (``/v1/models/gemini-2.5-pro:countTokens``): OpenAI's model paths
# have no colon.
_GEMINI_MODEL_METHOD = re.compile(r"^/v1\d*/(tuned)?[mM]odels/[^/:]+:[A-Za-z]+$")
# Headers only one API defines (lower case): their API's, whatever else the request says.
_OWN_HEADERS = {
    "anthropic": ("anthropic-version", "anthropic-beta"),
    "gemini": ("x-goog-api-key", "x-goog-api-client"),
    "openai": ("openai-organization", "openai-project", "openai-beta"),
}
_NAMES = {"anthropic": "Anthropic", "openai": "OpenAI", "gemini": "Gemini"}


@dataclass(frozen=True, slots=True)
class Route:
    upstream: str  # "anthropic" | "openai" | "gemini"
    protocol: str  # one of PROTOCOLS (a side request: its upstream's main protocol)
    model_call: bool  # a model request: measured and offered to the rewriter
    streamed_by_path: bool = False  # Gemini's streamGenerateContent


def _path_route(post: bool, path: str) -> Route | None:
    """The route the path alone names, or None (a path two APIs share, or none has)."""
    if path.startswith(("/v1beta/", "/v1alpha/")) or _GEMINI_MODEL_METHOD.match(path):
        call = bool(_GEMINI_CALL.match(path))
        return Route("gemini", GEMINI, post and call, ":streamGenerateContent" in path)
    if path.startswith(("/v1/messages", "/v1/complete")):
        return Route("anthropic", ANTHROPIC, post and path == "/v1/messages")
    if path.startswith("/v1/chat/completions"):
        return Route("openai", OPENAI_CHAT, post and path == "/v1/chat/completions")
    if path.startswith(("/v1/responses", "/v1/completions", "/v1/embeddings")):
        return Route("openai", OPENAI_RESPONSES, post and path == "/v1/responses")
    return None


def _header_apis(headers: Mapping[str, str]) -> list[str]:
    lowered = {key.lower() for key in headers}
    return [api for api, names in _OWN_HEADERS.items() if lowered.intersection(names)]


def route_of(method: str, path: str, headers: Mapping[str, str]) -> Route | None:
    """The route of a request, or None for a path of no known API."""
    route = _path_route(method == "POST", path)
    if route is not None:
        return route
    if not path.startswith("/v1/"):
        return None
    # A path both Anthropic and OpenAI serve (/v1/models, /v1/files ...): Anthropic's requests
    # carry its version header.
    if "anthropic" in _header_apis(headers):
        return Route("anthropic", ANTHROPIC, False)
    return Route("openai", OPENAI_RESPONSES, False)


def mismatch(route: Route, headers: Mapping[str, str]) -> str | None:
    """Why a request on ``route``'s path carries another API's own header, or None."""
    others = [api for api in _header_apis(headers) if api != route.upstream]
    if not others:
        return None
    names = ", ".join(
        sorted(
            key
            for key in headers
            if any(key.lower() in _OWN_HEADERS[api] for api in others)  # as the agent spelt it
        )
    )
    return (
        f"a {_NAMES[others[0]]} header ({names}) on a {_NAMES[route.upstream]} path: "
        "refused, the path decides the API"
    )

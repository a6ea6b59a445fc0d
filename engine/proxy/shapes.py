"""Error bodies in each provider's own shape, so the agent shows the proxy's error as it shows
the provider's (and retries where it would)."""

from __future__ import annotations

import json


def error_body(upstream: str, status: int, message: str) -> bytes:
    """A JSON error body as ``upstream``'s API writes one for ``status``."""
    value: dict[str, object]
    if upstream == "anthropic":
        kind = {
            400: "invalid_request_error",
            413: "request_too_large",
            404: "not_found_error",
            403: "permission_error",
        }
        value = {
            "type": "error",
            "error": {"type": kind.get(status, "api_error"), "message": message},
        }
    elif upstream == "gemini":
        state = {
            400: "INVALID_ARGUMENT",
            413: "INVALID_ARGUMENT",
            404: "NOT_FOUND",
            403: "PERMISSION_DENIED",
        }
        value = {
            "error": {
                "code": status,
                "message": message,
                "status": state.get(status, "UNAVAILABLE"),
            }
        }
    else:
        kind = {
            400: "invalid_request_error",
            413: "invalid_request_error",
            404: "invalid_request_error",
            403: "invalid_request_error",
        }
        value = {
            "error": {
                "message": message,
                "type": kind.get(status, "server_error"),
                "param": None,
                "code": None,
            }
        }
    return json.dumps(value).encode()

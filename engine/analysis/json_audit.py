"""Compactness audit of JSON tool results: what minified JSON without null fields would save."""

from __future__ import annotations

import json
from typing import Any


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


def compact_json(text: str) -> str | None:
    """The result minified, with null-valued object fields dropped; None if it is not JSON
    (only objects and arrays count: a bare number or string has nothing to compact)."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return json.dumps(_without_nulls(value), ensure_ascii=False, separators=(",", ":"))

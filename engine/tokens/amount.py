"""Token amounts as people type them: ``64000``, ``64,000``, ``64k``, ``1.5M``. One parser for
every budget and window (the dashboard's ``b``, ``report --budget``, ``compact --budget``,
``render --budget``)."""

from __future__ import annotations

import re

_AMOUNT = re.compile(r"(\d+(?:\.\d+)?)([km]?)")
_SCALE = {"": 1, "k": 1_000, "m": 1_000_000}


def token_amount(text: str) -> int | None:
    """The tokens ``text`` names (a whole number, or with k/M: 64k, 1.5M; commas and
    underscores between digits allowed), or None when it names no whole number of tokens."""
    cleaned = text.strip().lower().replace(",", "").replace("_", "")
    match = _AMOUNT.fullmatch(cleaned)
    if match is None:
        return None
    value = float(match.group(1)) * _SCALE[match.group(2)]
    return int(value) if value == int(value) else None


def positive_amount(text: str) -> int | None:
    """``token_amount``, above 0."""
    tokens = token_amount(text)
    return tokens if tokens is not None and tokens > 0 else None

"""Counted nouns in everything ctxtop writes (CLI, dashboard, status line): "1 request",
"2 requests", never "1 requests"."""

from __future__ import annotations

from collections.abc import Sequence


def plural(count: int, word: str, words: str | None = None) -> str:
    """1 request, 2 requests, 1,024 requests (``words``: an irregular plural)."""
    return f"{count:,} {word if count == 1 else words or word + 's'}"


def first_lines(lines: Sequence[str], shown: int, noun: str, verb: str) -> list[str]:
    """At most ``shown`` of ``lines``, then one line for the others ("and 9,990 more unknown
    keys ignored"): a file of a million bad keys is a few warnings, not a million."""
    if len(lines) <= shown:
        return list(lines)
    return [*lines[:shown], f"and {plural(len(lines) - shown, 'more ' + noun)} {verb}"]

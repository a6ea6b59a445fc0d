"""Counted nouns in everything ctxtop writes (CLI, dashboard, status line): "1 request",
"2 requests", never "1 requests"."""

from __future__ import annotations


def plural(count: int, word: str, words: str | None = None) -> str:
    """1 request, 2 requests, 1,024 requests (``words``: an irregular plural)."""
    return f"{count:,} {word if count == 1 else words or word + 's'}"

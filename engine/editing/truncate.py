"""Truncating a tool result over its limit as VS Code Copilot Chat does: the first 40 % and the
last 60 % of what fits are kept, with a marker between saying what was cut.

The cut is made in characters, sized by the result's own characters per token; if the result
is still over the limit (its tokens are not evenly spread), the kept part shrinks and is cut again.
"""

from __future__ import annotations

from collections.abc import Callable

TRUNCATED_MARK = "[ctxtop: tool result truncated"
HEAD_SHARE = 0.4  # of the kept characters, from the start; the rest comes from the end
ATTEMPTS = 5


def marker(tokens: int, hint: str) -> str:
    return (
        f"\n{TRUNCATED_MARK}: it had {tokens} tokens; its middle was cut, "
        f"the start and the end are kept. {hint}]\n"
    )


def keep_ends(text: str, kept_chars: int, middle: str) -> str:
    """The first 40 % and last 60 % of ``kept_chars`` characters of ``text``, ``middle`` between."""
    head = round(kept_chars * HEAD_SHARE)
    tail = kept_chars - head
    return text[:head] + middle + (text[-tail:] if tail > 0 else "")


def truncate(text: str, limit: int, count: Callable[[str], int], hint: str = "") -> str:
    """``text`` unchanged if it has at most ``limit`` tokens, else cut to fit them."""
    tokens = count(text)
    if tokens <= limit:
        return text
    middle = marker(tokens, hint)
    room = limit - count(middle)
    if room <= 0:
        return middle.strip()
    kept_chars = round(len(text) / tokens * room)
    for _ in range(ATTEMPTS):
        cut = keep_ends(text, kept_chars, middle)
        over = count(cut)
        if over <= limit or kept_chars == 0:
            return cut
        kept_chars = int(kept_chars * min(limit / over, 0.98))
    return keep_ends(text, 0, middle)

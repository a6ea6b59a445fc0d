"""Greedy filling: keep the cheapest regions while the rendered skeleton fits a character limit.

Keeping a region keeps its ancestors. A run of elided regions becomes one ``...``: on its own
line at the region's indentation, or ``{ ... }`` between an opening and a closing brace. The
fill keeps the longest cheapest-first prefix of regions that fits (found by bisection: each
render is linear in the file).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from ctxtop.engine.editing.skeleton.cost import TextNode

ELLIPSIS = "..."
_INDENT = re.compile(r"[ \t]*")

Piece = tuple[str, int]  # text, and its offset in the original (-1: not from the original)


def keep_first(root: TextNode, order: Sequence[TextNode], count: int) -> None:
    """Mark the first ``count`` regions of ``order`` (and their ancestors) kept, nothing else."""
    stack = [root]
    while stack:
        node = stack.pop()
        node.kept = False
        stack.extend(node.children)
    root.kept = True
    for node in order[:count]:
        current: TextNode | None = node
        while current is not None and not current.kept:
            current.kept = True
            current = current.parent


def render(node: TextNode, text: str) -> list[Piece]:
    """The kept text of ``node`` with elided runs replaced by ``...``."""
    if not node.children:
        return [(text[node.start : node.end], node.start)]
    items: list[tuple[str, list[Piece], TextNode]] = []
    for child in node.children:
        if child.region is None:
            gap = text[child.start : child.end]
            items.append(("blank" if not gap.strip() else "kept", [(gap, child.start)], child))
        elif child.kept:
            items.append(("kept", render(child, text), child))
        else:
            items.append(("elided", [], child))
    out: list[Piece] = []
    index = 0
    while index < len(items):
        if items[index][0] == "kept":
            out.extend(items[index][1])
            index += 1
            continue
        stop = index
        while stop < len(items) and items[stop][0] != "kept":
            stop += 1
        run = items[index:stop]
        elided = [child for kind, _, child in run if kind == "elided"]
        if not elided:
            for _, pieces, _ in run:
                out.extend(pieces)
        else:
            # Blank lines around the run stay (they separate the ``...`` from its neighbours).
            head = run[0][1] if run[0][0] == "blank" else []
            tail = run[-1][1] if run[-1][0] == "blank" else []
            last = run[-2][2] if tail else run[-1][2]
            out.extend(head)
            following = items[stop][1] if stop < len(items) else None
            out.extend(_marker(out, following, elided[0], last, text))
            if not out[-1][0].endswith(" "):  # not joined as { ... }
                out.extend(tail)
        index = stop
    return out


def _marker(
    out: list[Piece], following: list[Piece] | None, first: TextNode, last: TextNode, text: str
) -> list[Piece]:
    """The ``...`` standing for a run of elided regions (``out`` and ``following`` may be
    trimmed to join ``{ ... }`` on one line)."""
    before = out[-1][0] if out else ""
    if following and before.rstrip().endswith("{") and following[0][0].lstrip().startswith("}"):
        out[-1] = (before.rstrip(), out[-1][1])
        after, origin = following[0]
        trimmed = after.lstrip()
        following[0] = (trimmed, origin + len(after) - len(trimmed))
        return [(f" {ELLIPSIS} ", -1)]
    line_start = text.rfind("\n", 0, first.start) + 1
    match = _INDENT.match(text, line_start)
    indent = match.group(0) if match else ""
    if before and not before.endswith("\n"):
        indent = "" if before[-1:].isspace() else " "
    newline = "\n" if text[last.end - 1 : last.end] == "\n" else ""
    return [(indent + ELLIPSIS + newline, -1)]


def assemble(pieces: Sequence[Piece], text: str, numbers: Sequence[int] | None) -> str:
    """The pieces as one text; with ``numbers`` (the original's line numbers), each line is
    prefixed ``{number:>6}→`` as Claude Code's reads are, a ``...`` line has no number, and
    blank lines are left out (the numbers show where lines are missing)."""
    if numbers is None:
        return "".join(piece for piece, _ in pieces)
    line_starts = [0] + [index + 1 for index, char in enumerate(text) if char == "\n"]
    lines: list[str] = []
    buffer: list[str] = []
    origin = -2  # -2: no line started

    def flush() -> None:
        line = "".join(buffer)
        buffer.clear()
        if not line.strip():
            return  # numbered, a blank line says nothing (and its number costs tokens)
        if origin >= 0:
            row = bisect.bisect_right(line_starts, origin) - 1
            number = numbers[row] if row < len(numbers) else row + 1
            lines.append(f"{number:>6}→{line}")
        else:
            lines.append(f"{'':>6}→{line}")

    for piece, start in pieces:
        offset = 0
        for segment in piece.splitlines(keepends=True):
            if origin == -2:
                origin = start + offset if start >= 0 else -1
            buffer.append(segment)
            offset += len(segment)
            if segment.endswith("\n"):
                flush()
                origin = -2
    if buffer:
        flush()
    return "".join(lines)


def fill(
    root: TextNode,
    order: Sequence[TextNode],
    text: str,
    char_limit: int,
    numbers: Sequence[int] | None = None,
) -> str:
    """The skeleton keeping as many of the cheapest regions as fit in ``char_limit``."""

    def rendered(count: int) -> str:
        keep_first(root, order, count)
        return assemble(render(root, text), text, numbers)

    low, high = 0, len(order)
    best = rendered(0)
    while low < high:  # the largest count whose render fits
        middle = (low + high + 1) // 2
        candidate = rendered(middle)
        if len(candidate) <= char_limit:
            low, best = middle, candidate
        else:
            high = middle - 1
    return best

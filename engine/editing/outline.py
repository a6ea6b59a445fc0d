"""Skeleton mode for one tool result: a file read becomes the file's outline.

Applies to results of read tools (Claude Code's Read, ``read_file``, ``view``...) whose path has
a known language; anything else gets the placeholder. Claude Code numbers the lines it reads
(``     7→text``): the numbers are taken off before parsing and put back on the kept lines, so
the model still knows where each signature is (and can read just that range again).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ctxtop.engine.editing.placeholder import MARK, file_path, how_to_get_back
from ctxtop.engine.editing.size_limit import Limit
from ctxtop.engine.editing.skeleton import language_for_path, skeleton

_NUMBERED = re.compile(r" *(\d+)(?:→|\t)(.*)")
_READ_NAMES = re.compile(r"read|^view|^cat$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class NumberedText:
    text: str  # the file's lines without their numbers
    numbers: list[int]
    trailer: str  # what follows the numbered lines (Claude Code's reminders), kept as is


def split_numbered(result: str) -> NumberedText | None:
    """The numbered lines of a read result (consecutive numbers), or None if it is not one."""
    lines = result.split("\n")
    numbers: list[int] = []
    body: list[str] = []
    for line in lines:
        match = _NUMBERED.fullmatch(line)
        if match is None or (numbers and int(match[1]) != numbers[-1] + 1):
            break
        numbers.append(int(match[1]))
        body.append(match[2])
    if not numbers:
        return None
    rest = lines[len(numbers) :]
    text = "\n".join(body) + ("\n" if rest else "")
    return NumberedText(text, numbers, "\n".join(rest))


def is_file_read(tool: str, tool_input: Any) -> bool:
    if file_path(tool_input) is None:
        return False
    if isinstance(tool_input, dict) and tool_input.get("command") == "view":
        return True  # str_replace_based_edit_tool's view command
    return bool(_READ_NAMES.search(tool))


def outline_result(
    tool: str,
    tool_input: Any,
    result: str,
    budget: Limit,
    count: Callable[[str], int],
    tokens: int,
) -> str | None:
    """The result as an outline within ``budget`` (tokens, or % of the result's ``tokens``);
    None when it is not a read of a file in a known language, or no outline fits."""
    path = file_path(tool_input)
    if path is None or not is_file_read(tool, tool_input):
        return None
    language = language_for_path(path)
    if language is None:
        return None
    numbered = split_numbered(result)
    text, numbers, trailer = (
        (numbered.text, numbered.numbers, numbered.trailer) if numbered else (result, None, "")
    )
    header = (
        f"{MARK} ({tokens} tokens); an outline of {path} stands in for it, bodies elided as "
        f"`...`. {how_to_get_back(tool, tool_input)}]\n"
    )
    room = budget.of(tokens) - count(header) - count(trailer)
    if room <= 0 or not text.strip():
        return None
    try:
        outline = skeleton(text, language, room, count, numbers=numbers)
    except RecursionError:  # absurdly deep nesting: the placeholder will do
        return None
    if not outline.fits:
        return None
    return header + outline.text + trailer

"""Placeholder text for a cleared tool result: what was cleared and how to get it back."""

from __future__ import annotations

import json
from typing import Any

from engine.editing.offload import OFFLOADED_MARK
from engine.editing.truncate import TRUNCATED_MARK

MARK = "[ctxtop: old tool result cleared"  # also heads a skeleton (engine/editing/outline.py)

_PATH_KEYS = ("file_path", "path", "filePath", "absolute_path", "notebook_path")
_COMMAND_KEYS = ("command", "cmd")


def as_object(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return value
    return value


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def file_path(tool_input: Any) -> str | None:
    """The file a call names (``file_path``, ``path``...), or None."""
    value = as_object(tool_input)
    if isinstance(value, dict):
        for key in _PATH_KEYS:
            if isinstance(value.get(key), str):
                return str(value[key])
    return None


def how_to_get_back(tool: str, tool_input: Any) -> str:
    """ "To see it again, ...": read the file again, run the command again, or call the tool."""
    path = file_path(tool_input)
    if path is not None:
        return f"To see it again, read the file {_short(path)} again."
    value = as_object(tool_input)
    if isinstance(value, dict):
        for key in _COMMAND_KEYS:
            command = value.get(key)
            if isinstance(command, list):
                command = " ".join(str(part) for part in command)
            if isinstance(command, str):
                return f"To see it again, run the command again: {_short(command)}"
    return f"To see it again, call {tool} again with the same input."


def cleared_by_ctxtop(result: str) -> bool:
    """Whether a tool result is one ctxtop's editing wrote: a placeholder, a skeleton, a result
    truncated or moved to a file."""
    return "[ctxtop: " in result and any(
        mark in result for mark in (MARK, TRUNCATED_MARK, OFFLOADED_MARK)
    )


def placeholder(tool: str, tool_input: Any, tokens: int) -> str:
    """The text that replaces a result: names the file for reads, the command for shell calls."""
    return f"{MARK} ({tokens} tokens). {how_to_get_back(tool, tool_input)}]"


def clear_input(tool_input: Any, limit: int = 200) -> tuple[Any, bool]:
    """The input with every string longer than ``limit`` characters cleared; (value, changed)."""
    changed = False

    def walk(value: Any) -> Any:
        nonlocal changed
        if isinstance(value, str) and len(value) > limit:
            changed = True
            return f"[ctxtop: {len(value)} characters cleared]"
        if isinstance(value, dict):
            return {key: walk(item) for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item) for item in value]
        return value

    return walk(tool_input), changed

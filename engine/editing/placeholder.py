"""Placeholder text for a cleared tool result: what was cleared and how to get it back."""

from __future__ import annotations

import json
from typing import Any

from ctxtop.engine.editing.offload import OFFLOADED_MARK
from ctxtop.engine.editing.rerun import safe_to_rerun, shell_command
from ctxtop.engine.editing.truncate import TRUNCATED_MARK

MARK = "[ctxtop: old tool result cleared"  # also heads a skeleton (engine/editing/outline.py)

_PATH_KEYS = ("file_path", "path", "filePath", "absolute_path", "notebook_path")
# What names a call that cannot be made again (Task's description, a search's query ...).
_ABOUT_KEYS = ("description", "subject", "title", "prompt", "query", "pattern", "url", "name")


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
    """ "To see it again, ...": read the file again, run the command again, or call the tool;
    only for a call that merely reads (``engine/editing/rerun.py``). Any other is not to be
    made again: that would repeat what it did (start an agent, write a file, run a build)."""
    tool_input = as_object(tool_input)
    if not safe_to_rerun(tool, tool_input):
        return f"Do not call {tool} again to see it: that would repeat what it did."
    path = file_path(tool_input)
    if path is not None:
        return f"To see it again, read the file {_short(path)} again."
    command = shell_command(tool_input)
    if command is not None:
        return f"To see it again, run the command again: {_short(command)}"
    return f"To see it again, call {tool} again with the same input."


def about(tool: str, tool_input: Any) -> str:
    """What a call was about, for a result that cannot be fetched again: ``the result of
    Write on src/app.py``, ``the result of Task (description: set up the project)``."""
    words = f"the result of {tool}"
    tool_input = as_object(tool_input)
    path = file_path(tool_input)
    if path is not None:
        return f"{words} on {_short(path, 120)}"
    command = shell_command(tool_input)
    if command is not None:
        return f"{words}: {_short(command, 120)}"
    value = as_object(tool_input)
    if isinstance(value, dict):
        for key in _ABOUT_KEYS:
            if isinstance(value.get(key), str) and value[key].strip():
                return f"{words} ({key}: {_short(value[key], 120)})"
    return words


def cleared_by_ctxtop(result: str) -> bool:
    """Whether a tool result is one ctxtop's editing wrote: a placeholder, a skeleton, a result
    truncated or moved to a file."""
    return "[ctxtop: " in result and any(
        mark in result for mark in (MARK, TRUNCATED_MARK, OFFLOADED_MARK)
    )


def placeholder(tool: str, tool_input: Any, tokens: int) -> str:
    """The text that replaces a result: names the file for reads, the command for shell calls;
    for a call that changed something, what it was about and not to repeat it."""
    tool_input = as_object(tool_input)
    if safe_to_rerun(tool, tool_input):
        return f"{MARK} ({tokens} tokens). {how_to_get_back(tool, tool_input)}]"
    return (
        f"{MARK} ({tokens} tokens): {about(tool, tool_input)}. {how_to_get_back(tool, tool_input)}]"
    )


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

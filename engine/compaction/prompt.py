"""What the summarising model is asked, and the conversation it is shown (as text, or as the
provider's native messages with the session's tools)."""

from __future__ import annotations

import json
import re
from typing import Any

from ctxtop.engine.compaction.items import Cut, Item
from ctxtop.engine.compaction.structured import TITLES

RESULT_LIMIT = 2000  # characters of each tool result shown to the summariser

SYSTEM = """You write hand-off notes for a coding agent whose conversation is being compacted.
The earlier part of the conversation will be removed from the agent's context and replaced by
your note, so the note must let the agent carry on the work as if nothing had been removed.

First think in an <analysis> block: go through the conversation in order; list every request
the user made, every file that was read or changed and its final state, every error and what
fixed it, and what the agent was doing at the end (the last commands and their results).

Then write the note in a <summary> block with exactly these numbered sections:
{sections}

Rules: name files, functions, commands and error messages exactly; quote the user's requests
word for word; put the newest work last in each list; keep the note under {budget} tokens;
do not call tools; write nothing after the </summary> tag."""

INSTRUCTION = (
    "Summarise the conversation above as instructed: an <analysis> block, then the <summary> "
    "block with the 8 sections. Pay most attention to the latest requests, commands and results."
)


def system_prompt(budget: int) -> str:
    sections = "\n".join(f"{n}. {title}" for n, title in enumerate(TITLES, 1))
    return SYSTEM.format(sections=sections, budget=budget)


def _clip(text: str, limit: int = RESULT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[… {len(text) - limit} more characters]"


def _arguments(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _size(item: Item) -> int:
    """Characters an item takes in the prompt (tool inputs and results as clipped)."""
    size = len(item.text)
    for call in item.calls:
        size += len(_clip(_arguments(call.input), 1000)) + len(_clip(call.result or ""))
    return size


def _shown(cut: Cut, limit: int | None) -> tuple[list[Item], int]:
    """The items to show, newest kept when they exceed ``limit`` characters; and how many of
    the oldest were left out (the summariser's own window is finite)."""
    items = [item for item in cut.summarised if item.kind not in ("tool_result", "standing")]
    if limit is None:
        return items, 0
    total, first = 0, len(items)
    while first > 0 and total + _size(items[first - 1]) <= limit:
        first -= 1
        total += _size(items[first])
    return items[first:], first


def _omitted(count: int) -> str:
    return (
        f"[{count} earlier messages are left out to fit the summariser's window; the previous "
        "summary, if any, and the transcript file cover them]"
    )


def _previous(cut: Cut) -> str | None:
    if cut.previous_summary is None:
        return None
    return f"Summary of the conversation before this part:\n{cut.previous_summary.text}"


def transcript(cut: Cut, limit: int | None = None) -> str:
    """The summarised part as plain text (simple mode)."""
    lines: list[str] = []
    previous = _previous(cut)
    if previous:
        lines.append(previous)
    shown, omitted = _shown(cut, limit)
    if omitted:
        lines.append(_omitted(omitted))
    for item in shown:
        label = item.kind if item.role == "user" and item.kind != "request" else item.role
        if item.text.strip():
            lines.append(f"[{label}] {_clip(item.text, 4 * RESULT_LIMIT)}")
        for call in item.calls:
            lines.append(f"[tool call {call.name}] {_clip(_arguments(call.input), 1000)}")
            if call.result is not None:
                status = "error" if call.is_error else "result"
                lines.append(f"[tool {status}] {_clip(call.result)}")
    return "\n\n".join(lines)


def tool_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "tool"


def tool_names(cut: Cut) -> list[str]:
    """The tools the agent used in this context (their schemas are not in the logs)."""
    names: list[str] = []
    for item in cut.summarised + cut.kept:
        for call in item.calls:
            if tool_name(call.name) not in names:
                names.append(tool_name(call.name))
    return names


def openai_messages(cut: Cut, limit: int | None = None) -> list[dict[str, Any]]:
    """The summarised part as Chat Completions messages (tool calls and results included)."""
    messages: list[dict[str, Any]] = []
    previous = _previous(cut)
    if previous:
        messages.append({"role": "user", "content": previous})
    shown, omitted = _shown(cut, limit)
    if omitted:
        messages.append({"role": "user", "content": _omitted(omitted)})
    for item in shown:
        if item.role != "assistant":
            messages.append({"role": "user", "content": item.text or f"[{item.kind}]"})
            continue
        message: dict[str, Any] = {"role": "assistant", "content": item.text or None}
        if item.calls:
            message["tool_calls"] = [
                {
                    "id": call.call_id,
                    "type": "function",
                    "function": {"name": tool_name(call.name), "arguments": _arguments(call.input)},
                }
                for call in item.calls
            ]
        messages.append(message)
        for call in item.calls:
            result = _clip(call.result) if call.result is not None else "(no result)"
            messages.append({"role": "tool", "tool_call_id": call.call_id, "content": result})
    messages.append({"role": "user", "content": INSTRUCTION})
    return messages


def anthropic_messages(cut: Cut, limit: int | None = None) -> list[dict[str, Any]]:
    """The summarised part as Anthropic messages (roles alternate; results follow their calls)."""
    turns: list[tuple[str, list[dict[str, Any]]]] = []

    def add(role: str, block: dict[str, Any]) -> None:
        if turns and turns[-1][0] == role:
            turns[-1][1].append(block)
        else:
            turns.append((role, [block]))

    previous = _previous(cut)
    if previous:
        add("user", {"type": "text", "text": previous})
    shown, omitted = _shown(cut, limit)
    if omitted:
        add("user", {"type": "text", "text": _omitted(omitted)})
    for item in shown:
        role = "assistant" if item.role == "assistant" else "user"
        if item.text.strip():
            add(role, {"type": "text", "text": item.text})
        elif role == "user":
            add(role, {"type": "text", "text": f"[{item.kind}]"})
        for call in item.calls:
            value = call.input if isinstance(call.input, dict) else {"input": call.input}
            add("assistant", {"type": "tool_use", "id": call.call_id,
                              "name": tool_name(call.name), "input": value})  # fmt: skip
        for call in item.calls:
            result = _clip(call.result) if call.result is not None else "(no result)"
            add("user", {"type": "tool_result", "tool_use_id": call.call_id, "content": result})
    add("user", {"type": "text", "text": INSTRUCTION})
    if turns and turns[0][0] != "user":
        turns.insert(0, ("user", [{"type": "text", "text": "(the conversation starts here)"}]))
    return [{"role": role, "content": blocks} for role, blocks in turns]

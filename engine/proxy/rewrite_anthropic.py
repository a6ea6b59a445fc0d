"""Live rewrite of an Anthropic Messages request (Claude Code, Copilot CLI's Anthropic mode).

Edit: each cleared ``tool_result``'s ``content`` becomes the plan's text (its other keys, such
as ``is_error`` and ``cache_control``, stay); a cleared ``tool_use`` input becomes the plan's.
Compaction: the messages before the first kept round become one user message: Claude Code's
standing context (the ``<system-reminder>`` blocks it puts first in the first message), the
summary, and, when the cut fell inside a turn, that turn's request. Thinking blocks are never
touched (they are dropped only with the whole message of a summarised round).
"""

from __future__ import annotations

from typing import Any

from ctxtop.engine.proxy.live_plan import CompactCut, LivePlan
from ctxtop.engine.proxy.rewrite_common import (
    Entry,
    compaction_boundary,
    pairs_intact,
    round_in_progress,
)

REMINDER = "<system-reminder>"


def _blocks(message: dict[str, Any]) -> list[Any]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content) if isinstance(content, list) else []


def _is_reminder(block: Any) -> bool:
    return (
        isinstance(block, dict)
        and block.get("type") == "text"
        and str(block.get("text", "")).lstrip().startswith(REMINDER)
    )


def entry(message: Any) -> Entry:
    if not isinstance(message, dict):
        return Entry("user")
    role = {"assistant": "assistant", "system": "standing"}.get(str(message.get("role")), "user")
    found = Entry(role)
    said: list[str] = []
    for block in _blocks(message):
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and role == "assistant":
            said.append(str(block.get("text", "")))
        elif kind == "tool_use" and role == "assistant":
            found.calls.add(str(block.get("id")))
        elif kind == "tool_result":
            found.results.add(str(block.get("tool_use_id")))
        elif role == "user" and kind in ("text", "image", "document") and not _is_reminder(block):
            found.typed = True
    found.said = "\n".join(said)
    return found


def edit(body: dict[str, Any], plan: LivePlan) -> bool:
    """Replace the plan's results and inputs in place; True if anything changed."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return False
    changed = False
    model = [isinstance(m, dict) and m.get("role") == "assistant" for m in messages]
    for message in messages[: round_in_progress(model)]:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                new = plan.results.get(str(block.get("tool_use_id")))
                if new is not None and block.get("content") != new:
                    block["content"] = new
                    changed = True
            elif block.get("type") == "tool_use" and message.get("role") == "assistant":
                new_input = plan.inputs.get(str(block.get("id")))
                if new_input is not None and block.get("input") != new_input:
                    block["input"] = new_input
                    changed = True
    return changed


def compact(body: dict[str, Any], cut: CompactCut) -> bool:
    """Replace the summarised rounds by the summary in place; True if the request held them."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return False
    entries = [entry(m) for m in messages]
    boundary = compaction_boundary(entries, cut)
    if boundary is None:
        return False
    first = _blocks(messages[0]) if entries[0].role == "user" else []
    standing = []
    for block in first:  # Claude Code's context (rules, memory, date) leads the first message
        if not _is_reminder(block):
            break
        standing.append(block)
    head: list[Any] = [*standing, {"type": "text", "text": cut.message}]
    if boundary.request is not None:
        request = _blocks(messages[boundary.request])
        if boundary.request == 0:
            request = request[len(standing) :]
        head += [b for b in request if not (isinstance(b, dict) and b.get("type") == "tool_result")]
    rest = messages[boundary.keep_from :]
    if isinstance(rest[0], dict) and rest[0].get("role") == "user":  # a kept turn's request
        head += _blocks(rest[0])
        rest = rest[1:]
    # Messages the agent sends as role "system" (Claude Code's list of agent types) stay.
    kept = [
        m
        for m, e in zip(messages[: boundary.keep_from], entries, strict=False)
        if e.role == "standing"
    ]
    new = [{"role": "user", "content": head}, *kept, *rest]
    if not pairs_intact([entry(m) for m in new]):
        return False
    body["messages"] = new
    return True

"""Live rewrite of OpenAI requests: the Responses API (Codex CLI) and Chat Completions.

Edit: each cleared call output (``function_call_output`` / ``custom_tool_call_output`` items;
``tool`` messages) becomes the plan's text. Compaction: the entries before the first kept round
become the standing context (developer and system messages, the context Codex injects as user
messages) and one user message with the summary, then, when the cut fell inside a turn, that
turn's request, as the ``replacement_history`` of a compacted Codex fork holds. Reasoning items
(with their encrypted content) are never changed; those of summarised rounds go with them.
"""

from __future__ import annotations

from typing import Any

from ctxtop.engine.agents import proxied
from ctxtop.engine.editing.writer import dumps
from ctxtop.engine.proxy.live_plan import CompactCut, LivePlan
from ctxtop.engine.proxy.rewrite_common import (
    Entry,
    compaction_boundary,
    pairs_intact,
    round_in_progress,
)

OUTPUTS = ("function_call_output", "custom_tool_call_output")
CALLS = ("function_call", "custom_tool_call", "local_shell_call")
MODEL_ITEMS = (*CALLS, "reasoning", "web_search_call")
# How the user messages agents inject as context begin (instructions, not the user's words).
STANDING = tuple(prefix for use in proxied() for prefix in use.standing)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))


def _is_model_item(item: dict[str, Any]) -> bool:
    return item.get("type") in MODEL_ITEMS or item.get("role") == "assistant"


def response_entry(item: Any) -> Entry:
    if not isinstance(item, dict):
        return Entry("user")
    kind, role = item.get("type", "message"), item.get("role")
    if kind in OUTPUTS:
        return Entry("tool", results={str(item.get("call_id"))})
    if kind in MODEL_ITEMS:
        calls = {str(item.get("call_id"))} if kind in CALLS else set()
        return Entry("assistant", calls=calls)
    if role == "assistant":
        return Entry("assistant", said=_text(item.get("content")))
    if role in ("system", "developer") or _text(item.get("content")).lstrip().startswith(STANDING):
        return Entry("standing")
    return Entry("user", typed=True)


def chat_entry(message: Any) -> Entry:
    if not isinstance(message, dict):
        return Entry("user")
    role = message.get("role")
    if role == "tool":
        return Entry("tool", results={str(message.get("tool_call_id"))})
    if role == "assistant":
        calls = message.get("tool_calls")
        ids = (
            {str(c.get("id")) for c in calls if isinstance(c, dict)}
            if isinstance(calls, list)
            else set()
        )
        return Entry("assistant", calls=ids, said=_text(message.get("content")))
    if role in ("system", "developer"):
        return Entry("standing")
    return Entry("user", typed=True)


def edit_responses(body: dict[str, Any], plan: LivePlan) -> bool:
    items = body.get("input")
    if not isinstance(items, list):
        return False
    changed = False
    model = [isinstance(i, dict) and _is_model_item(i) for i in items]
    for item in items[: round_in_progress(model)]:
        if not isinstance(item, dict):
            continue
        call_id = str(item.get("call_id"))
        if item.get("type") in OUTPUTS and call_id in plan.results:
            changed |= _put(item, "output", plan.results[call_id])
        elif item.get("type") in CALLS and call_id in plan.inputs:
            key = "arguments" if "arguments" in item else "input"  # as the Codex fork writes it
            changed |= _put(item, key, dumps(plan.inputs[call_id]))
    return changed


def _put(holder: dict[str, Any], key: str, value: Any) -> bool:
    """Set ``holder[key]``; True if that changed it."""
    if holder.get(key) == value:
        return False
    holder[key] = value
    return True


def edit_chat(body: dict[str, Any], plan: LivePlan) -> bool:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return False
    changed = False
    model = [isinstance(m, dict) and m.get("role") == "assistant" for m in messages]
    for message in messages[: round_in_progress(model)]:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool":
            new = plan.results.get(str(message.get("tool_call_id")))
            if new is not None:
                changed |= _put(message, "content", new)
        for call in message.get("tool_calls") or [] if message.get("role") == "assistant" else []:
            new_input = plan.inputs.get(str(call.get("id"))) if isinstance(call, dict) else None
            function = call.get("function") if isinstance(call, dict) else None
            if new_input is not None and isinstance(function, dict):
                changed |= _put(function, "arguments", dumps(new_input))
    return changed


def _compact_list(
    entries_of: list[Any], entries: list[Entry], cut: CompactCut, summary: dict[str, Any]
) -> list[Any] | None:
    boundary = compaction_boundary(entries, cut)
    if boundary is None:
        return None
    head = entries_of[: boundary.keep_from]
    standing = [item for item, e in zip(head, entries, strict=False) if e.role == "standing"]
    new = [*standing, summary]
    if boundary.request is not None:
        new.append(entries_of[boundary.request])
    new += entries_of[boundary.keep_from :]
    return new


def compact_responses(body: dict[str, Any], cut: CompactCut) -> bool:
    items = body.get("input")
    if not isinstance(items, list) or not items:
        return False
    summary = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": cut.message}],
    }
    new = _compact_list(items, [response_entry(i) for i in items], cut, summary)
    if new is None or not pairs_intact([response_entry(i) for i in new]):
        return False
    body["input"] = new
    return True


def compact_chat(body: dict[str, Any], cut: CompactCut) -> bool:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return False
    summary = {"role": "user", "content": cut.message}
    new = _compact_list(messages, [chat_entry(m) for m in messages], cut, summary)
    if new is None or not pairs_intact([chat_entry(m) for m in new]):
        return False
    body["messages"] = new
    return True

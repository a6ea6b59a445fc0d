"""OpenAI requests: the Responses API (``instructions``, ``tools``, ``input`` items) and Chat
Completions (``messages``, ``tools``). The system prompt is the Responses ``instructions``
field; system and developer *messages* are conversation, of kind ``instructions``, because the
agent's log holds them: Codex's rollout records its developer messages and (0.169 on, when it
sends its base instructions as the first developer message) the base instructions in
``session_meta``, and ctxtop shows them all in the log's instructions section -- counted as
system prompt too, they were counted twice. OpenAI caches prefixes itself: there are no
breakpoints to report."""

from __future__ import annotations

from typing import Any

from ctxtop.engine.proxy.tally import Tally, _json

_CALLS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")
INSTRUCTION_ROLES = ("developer", "system")


def _tools(tally: Tally, tools: Any) -> None:
    for tool in tools if isinstance(tools, list) else []:
        function = tool.get("function") if isinstance(tool, dict) else None
        holder = function if isinstance(function, dict) else tool
        name = holder.get("name") or holder.get("type") if isinstance(holder, dict) else None
        tally.tool(str(name or "?"), tool)


def _parts(tally: Tally, kind: str, content: Any) -> None:
    if isinstance(content, str):
        tally.text(kind, content)
        return
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            tally.text("other", _json(part))
        elif part.get("type") in ("input_image", "image_url"):
            image = part.get("image_url")
            detail = image.get("detail") if isinstance(image, dict) else part.get("detail")
            tally.image(detail=str(detail or "auto"))
        elif isinstance(part.get("text"), str):
            tally.text(kind, part["text"])
        elif part.get("type") == "input_file":
            tally.text("document", _json(part))
        else:
            tally.text("other", _json(part))


def _text_of(content: Any) -> str:
    """The text of a message's content (a string or parts), for a system block's count."""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(
        part["text"]
        if isinstance(part, dict) and isinstance(part.get("text"), str)
        else _json(part)
        for part in parts
    )


def _item(tally: Tally, item: dict[str, Any]) -> None:
    kind = item.get("type", "message")
    if kind == "message" and item.get("role") in INSTRUCTION_ROLES:
        tally.message()
        tally.text("instructions", _text_of(item.get("content")))
    elif kind == "message":
        tally.message()
        _parts(tally, f"{item.get('role', 'user')}_text", item.get("content"))
    elif kind in _CALLS:
        tally.text(
            "tool_use",
            str(item.get("name") or "") + str(item.get("arguments") or item.get("input") or ""),
        )
    elif kind in _OUTPUTS:
        output = item.get("output")
        if isinstance(output, list):
            _parts(tally, "tool_result", output)
        else:
            tally.text("tool_result", output if isinstance(output, str) else _json(output))
    elif kind == "reasoning":
        summary = item.get("summary")
        texts = (
            [s.get("text", "") for s in summary if isinstance(s, dict)]
            if isinstance(summary, list)
            else []
        )
        tally.text("thinking", "\n".join(str(t) for t in texts))
    else:
        tally.text("other", _json(item))


def measure_responses(body: dict[str, Any], tally: Tally) -> dict[str, Any]:
    _tools(tally, body.get("tools"))
    instructions = body.get("instructions")
    if isinstance(instructions, str):
        tally.system_block(instructions)
    items = body.get("input")
    if isinstance(items, str):
        tally.message()
        tally.text("user_text", items)
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            _item(tally, item)
    return tally.figures()


def measure_chat(body: dict[str, Any], tally: Tally) -> dict[str, Any]:
    _tools(tally, body.get("tools"))
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        tally.message()
        if role in INSTRUCTION_ROLES:
            tally.text("instructions", _text_of(message.get("content")))
            continue
        _parts(tally, "tool_result" if role == "tool" else f"{role}_text", message.get("content"))
        for call in message.get("tool_calls") or []:
            tally.text("tool_use", _json(call))
    return tally.figures()

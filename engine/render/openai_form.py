"""Raw messages to the OpenAI chat format, as the library's ``toMode(OutputMode.OpenAI, ...)``.

System and assistant content is the joined text; user and tool content is a string when every
part is text, else a list of parts (documents dropped, opaque values inserted as they are).
Keys whose value is undefined in the library are ``None`` here and dropped from JSON output.
"""

from __future__ import annotations

from typing import Any

from ctxtop.engine.render.jstext import js_truthy

TEXT, IMAGE, OPAQUE, DOCUMENT = 1, 0, 2, 4
ROLE_NAMES = ("system", "user", "assistant", "tool")


def _joined_text(content: list[dict[str, Any]]) -> str:
    return "".join(part["text"] for part in content if part["type"] == TEXT)


def _text_and_images(content: list[dict[str, Any]]) -> str | list[Any]:
    texts: list[str] = []
    for part in content:
        if part["type"] != TEXT:
            break
        texts.append(part["text"])
    else:  # text only (the common case): the parts below would be joined again
        return "".join(texts)
    parts: list[Any] = []
    for part in content:
        kind = part["type"]
        if kind == TEXT:
            converted: Any = {"type": "text", "text": part["text"]}
        elif kind == IMAGE:
            converted = {"image_url": part["imageUrl"], "type": "image_url"}
        elif kind == OPAQUE:
            converted = part["value"]
        else:
            continue
        if js_truthy(converted):
            parts.append(converted)
    if all(isinstance(p, dict) and p.get("type") == "text" for p in parts):
        return "".join(p["text"] for p in parts)
    return parts


def to_openai_message(message: dict[str, Any]) -> dict[str, Any]:
    role = message["role"]
    content = message["content"]
    if role == 0:
        return {"role": "system", "content": _joined_text(content), "name": message.get("name")}
    if role == 1:
        return {"role": "user", "content": _text_and_images(content), "name": message.get("name")}
    if role == 2:
        calls = message.get("toolCalls")
        return {
            "role": "assistant",
            "content": _joined_text(content),
            "name": message.get("name"),
            "tool_calls": None
            if calls is None
            else [{"id": c["id"], "function": c["function"], "type": "function"} for c in calls],
        }
    return {
        "role": "tool",
        "content": _text_and_images(content),
        "tool_call_id": message.get("toolCallId"),
    }


def drop_undefined(value: Any) -> Any:
    """JSON form: keys whose value is ``None`` disappear, as with JSON.stringify of undefined."""
    if isinstance(value, dict):
        return {k: drop_undefined(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_undefined(v) for v in value]
    return value

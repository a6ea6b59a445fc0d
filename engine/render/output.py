"""Render results in the oracle's JSON form (ptsx-oracle FORMAT.md "Output"), byte for byte.

Objects are written as JavaScript's JSON.stringify would: integer-like keys first in ascending
order, integral numbers without a fraction, NaN as null, non-ASCII characters as they are.
"""

from __future__ import annotations

import json
import math
from typing import Any

import msgspec

from ctxtop.engine.render.openai_form import ROLE_NAMES, drop_undefined, to_openai_message
from ctxtop.engine.render.renderer import LIBRARY, RenderResult

TEXT, IMAGE, OPAQUE, BREAKPOINT, DOCUMENT = 1, 0, 2, 3, 4


def part_json(part: dict[str, Any]) -> dict[str, Any]:
    kind = part["type"]
    if kind == TEXT:
        return {"type": "text", "text": part["text"]}
    if kind == IMAGE:
        url = part["imageUrl"]
        shown: dict[str, Any] = {"type": "image", "url": url["url"]}
        if url.get("detail") is not None:
            shown["detail"] = url["detail"]
        if url.get("mediaType") is not None:
            shown["mediaType"] = url["mediaType"]
        return shown
    if kind == DOCUMENT:
        data = part["documentData"]
        return {"type": "document", "data": data.get("data"), "mediaType": data.get("mediaType")}
    if kind == OPAQUE:
        return {"type": "opaque", "value": js_value(part["value"])}
    shown = {"type": "cacheBreakpoint"}
    if part.get("cacheType") is not None:
        shown["cacheType"] = part["cacheType"]
    return shown


def message_json(message: dict[str, Any]) -> dict[str, Any]:
    role = message["role"]
    shown: dict[str, Any] = {"role": ROLE_NAMES[role] if 0 <= role < 4 else str(role)}
    if message.get("name") is not None:
        shown["name"] = message["name"]
    shown["content"] = [part_json(part) for part in message["content"]]
    shown["text"] = "".join(p["text"] for p in message["content"] if p["type"] == TEXT)
    if message.get("toolCalls") is not None:
        shown["toolCalls"] = [
            {
                "id": js_value(call["id"]),
                "name": js_value(call["function"].get("name")),
                "arguments": js_value(call["function"].get("arguments")),
            }
            for call in message["toolCalls"]
        ]
    if message.get("toolCallId") is not None:
        shown["toolCallId"] = js_value(message["toolCallId"])
    return shown


def result_json(result: RenderResult, openai: bool = False) -> dict[str, Any]:
    """The oracle's output object for one render, already in JSON.stringify's form."""
    shown: dict[str, Any] = {
        "library": LIBRARY,
        "tokenizer": result.tokenizer,
        "budget": result.budget,
    }
    if result.error is None:
        assert result.messages is not None
        shown["tokenCount"] = js_value(result.token_count)
        shown["messages"] = [message_json(m) for m in result.messages]
        if openai:
            shown["openai"] = [drop_undefined(to_openai_message(m)) for m in result.messages]
        shown["pruned"] = result.pruned
        shown["absent"] = result.absent
        shown["removedCount"] = result.removed_count
    else:
        error: dict[str, Any] = {"type": result.error.type, "message": result.error.message}
        if result.error.unpruned_messages is not None:
            error["unprunedMessages"] = [message_json(m) for m in result.error.unpruned_messages]
        shown["error"] = error
    shown["budgets"] = js_value(result.budgets)
    shown["expandableCalls"] = js_value(result.expandable_calls)
    return shown


def _array_index(key: str) -> int | None:
    if key.isdigit() and (key == "0" or not key.startswith("0")) and key.isascii():
        value = int(key)
        if value < 4294967295:
            return value
    return None


def js_value(value: Any) -> Any:
    """Values as JSON.stringify sees them: JS key order, integral floats as integers."""
    if isinstance(value, dict):
        indexed = []
        named: dict[str, Any] = {}
        for key, item in value.items():
            name = key if type(key) is str else str(key)
            # ints and strings are in their JSON form already (budgets: thousands of ints)
            kind = type(item)
            shown = item if kind is int or kind is str else js_value(item)
            index = _array_index(name) if name[:1].isdigit() else None
            if index is None:
                named[name] = shown
            else:
                indexed.append((index, name, shown))
        if not indexed:
            return named
        indexed.sort()
        return {**{k: v for _, k, v in indexed}, **named}
    if isinstance(value, list):
        return [js_value(item) for item in value]
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        if value == int(value) and abs(value) < 1e21:
            return int(value)
    return value


def dumps(value: Any, indent: int | None = None, normalized: bool = False) -> str:
    """JSON text; ``normalized``: ``value`` is already in JS form (``result_json``'s output)."""
    return json.dumps(
        value if normalized else js_value(value),
        ensure_ascii=False,
        indent=indent,
        separators=(",", ":") if indent is None else (",", ": "),
    )


# What msgspec writes as json.dumps does (ensure_ascii off, compact): floats it writes otherwise
# (1e-07 is 1e-7, NaN and Infinity null), and it refuses a lone surrogate.
_SAME_TEXT = frozenset({str, int, bool, type(None)})
_CONTAINERS = _SAME_TEXT | {dict, list}
_KEYS = frozenset({str})


def json_line(value: Any) -> str:
    """``dumps(value, normalized=True)``, written by msgspec (a sixth of the time) when the
    text is the same: nothing but strings, whole numbers, booleans and None, in lists and in
    objects with string keys; anything else (a float first) by json.dumps."""
    if _same_text(value):
        try:
            return msgspec.json.encode(value).decode()
        except UnicodeEncodeError:
            pass
    return dumps(value, normalized=True)


def _same_text(value: Any) -> bool:
    if type(value) is dict:
        if not set(map(type, value)) <= _KEYS:
            return False
        items: Any = value.values()
    elif type(value) is list:
        items = value
    else:
        return type(value) in _SAME_TEXT
    kinds = set(map(type, items))  # the types of thousands of items without a Python loop
    if kinds <= _SAME_TEXT:
        return True
    if not kinds <= _CONTAINERS:
        return False
    return all(_same_text(item) for item in items if type(item) is dict or type(item) is list)

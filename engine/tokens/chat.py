"""Counting rules for chat structure: what a message, a tool schema or an image costs.

The encoder counts text exactly; the framing around it (role markers, separators, the way tool
schemas and calls are serialised) is not visible to us, so it is counted with these constants,
which follow the rules VS Code Copilot Chat uses for OpenAI-style chat. Calibration against the
API's reported usage (``engine.sessions.tokenizer_factor``) corrects what they miss.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Role marker and separators around every message.
MESSAGE_BASE_TOKENS = 3
# A message's optional ``name`` field.
NAME_TOKENS = 1
# Tool definitions: a fixed preamble once, a per-tool frame, and the schema JSON with 10 % overhead
# for the provider's own rendering of it.
TOOLS_BASE_TOKENS = 16
TOKENS_PER_TOOL = 8
TOOL_SCHEMA_FACTOR = 1.1
# Tool-call arguments are re-serialised by the provider with extra quoting and escapes.
TOOL_CALL_ARGS_FACTOR = 1.5

# OpenAI image cost: 85 base tokens plus 170 per 512-px tile after scaling (detail high/auto);
# detail low is the base alone.
OPENAI_IMAGE_BASE_TOKENS = 85
OPENAI_IMAGE_TILE_TOKENS = 170
OPENAI_IMAGE_TILE_PX = 512
OPENAI_IMAGE_MAX_PX = 2048
OPENAI_IMAGE_SHORT_SIDE_PX = 768
# Anthropic image cost: width x height / 750, after scaling the long edge down to 1568 px.
ANTHROPIC_PIXELS_PER_TOKEN = 750
ANTHROPIC_IMAGE_MAX_PX = 1568
# An image whose size is not known is counted as a 1024 x 1024 picture.
DEFAULT_IMAGE_PX = 1024

Counter = Callable[[str], int]


def openai_image_tokens(width: int, height: int, detail: str = "auto") -> int:
    if detail == "low":
        return OPENAI_IMAGE_BASE_TOKENS
    w, h = float(width), float(height)
    if max(w, h) > OPENAI_IMAGE_MAX_PX:
        scale = OPENAI_IMAGE_MAX_PX / max(w, h)
        w, h = w * scale, h * scale
    if min(w, h) > OPENAI_IMAGE_SHORT_SIDE_PX:
        scale = OPENAI_IMAGE_SHORT_SIDE_PX / min(w, h)
        w, h = w * scale, h * scale
    tiles = math.ceil(w / OPENAI_IMAGE_TILE_PX) * math.ceil(h / OPENAI_IMAGE_TILE_PX)
    return OPENAI_IMAGE_BASE_TOKENS + OPENAI_IMAGE_TILE_TOKENS * tiles


def anthropic_image_tokens(width: int, height: int) -> int:
    w, h = float(width), float(height)
    if max(w, h) > ANTHROPIC_IMAGE_MAX_PX:
        scale = ANTHROPIC_IMAGE_MAX_PX / max(w, h)
        w, h = w * scale, h * scale
    return math.ceil(w * h / ANTHROPIC_PIXELS_PER_TOKEN)


def image_tokens(
    width: int | None, height: int | None, provider: str = "openai", detail: str = "auto"
) -> int:
    """Token cost of one image by the provider's published formula."""
    w = width or DEFAULT_IMAGE_PX
    h = height or DEFAULT_IMAGE_PX
    if provider == "anthropic":
        return anthropic_image_tokens(w, h)
    return openai_image_tokens(w, h, detail)


def tool_definitions_tokens(tools: Sequence[Any], count: Counter) -> int:
    """Tokens of a request's tool definitions: 16 + 8 per tool + 1.1 x the schema JSON."""
    if not tools:
        return 0
    schema = json.dumps(list(tools), separators=(",", ":"), ensure_ascii=False)
    return (
        TOOLS_BASE_TOKENS
        + TOKENS_PER_TOOL * len(tools)
        + math.ceil(TOOL_SCHEMA_FACTOR * count(schema))
    )


def tool_calls(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The message's tool calls that are objects (a log may hold anything under the key)."""
    calls = message.get("tool_calls")
    return [call for call in calls if isinstance(call, Mapping)] if isinstance(calls, list) else []


def function_of(call: Mapping[str, Any]) -> Mapping[str, Any]:
    function = call.get("function")
    return function if isinstance(function, Mapping) else {}


def tool_call_tokens(call: Mapping[str, Any], count: Counter) -> int:
    """Tokens of one OpenAI-style tool call: its name plus 1.5 x its arguments."""
    function = function_of(call)
    name = str(function.get("name") or call.get("name") or "")
    arguments = function.get("arguments", call.get("arguments", ""))
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)
    return count(name) + math.ceil(TOOL_CALL_ARGS_FACTOR * count(arguments))


def _part_tokens(part: Any, count: Counter, provider: str) -> int:
    if isinstance(part, str):
        return count(part)
    if not isinstance(part, Mapping):
        return count(json.dumps(part, ensure_ascii=False))
    kind = part.get("type")
    if kind in ("image_url", "image", "input_image"):
        source = part.get("image_url") if isinstance(part.get("image_url"), Mapping) else part
        detail = str(source.get("detail", "auto")) if isinstance(source, Mapping) else "auto"
        return image_tokens(part.get("width"), part.get("height"), provider, detail)
    text = part.get("text")
    if isinstance(text, str):
        return count(text)
    return count(json.dumps(part, ensure_ascii=False))


def content_tokens(content: Any, count: Counter, provider: str = "openai") -> int:
    """Tokens of a message's ``content``: a string or a list of parts (text, images)."""
    if content is None:
        return 0
    if isinstance(content, str):
        return count(content)
    if isinstance(content, Sequence):
        return sum(_part_tokens(part, count, provider) for part in content)
    return _part_tokens(content, count, provider)


def message_tokens(message: Mapping[str, Any], count: Counter, provider: str = "openai") -> int:
    """Tokens of one chat message with its framing, name and tool calls."""
    total = MESSAGE_BASE_TOKENS + content_tokens(message.get("content"), count, provider)
    if message.get("name"):
        total += NAME_TOKENS + count(str(message["name"]))
    for call in tool_calls(message):
        total += tool_call_tokens(call, count)
    return total


@dataclass(frozen=True)
class ChatCount:
    """Tokens of a chat: each message's share and the tool definitions."""

    messages: tuple[int, ...]
    tools: int

    @property
    def total(self) -> int:
        return sum(self.messages) + self.tools


def chat_texts(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any] = ()) -> list[str]:
    """Every text ``count_chat`` will encode, so a caching counter can fetch them in one batch."""
    texts: list[str] = []
    for message in messages:
        content = message.get("content")
        parts = [content] if isinstance(content, str) else content or []
        if isinstance(parts, Sequence):
            for part in parts:
                if isinstance(part, str):
                    texts.append(part)
                elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                    texts.append(part["text"])
        if message.get("name"):
            texts.append(str(message["name"]))
        for call in tool_calls(message):
            function = function_of(call)
            texts.append(str(function.get("name") or call.get("name") or ""))
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                texts.append(arguments)
    if tools:
        texts.append(json.dumps(list(tools), separators=(",", ":"), ensure_ascii=False))
    return texts


def count_chat(
    messages: Sequence[Mapping[str, Any]],
    count: Counter,
    tools: Sequence[Any] = (),
    provider: str = "openai",
    batch: Callable[[Sequence[str]], list[int]] | None = None,
) -> ChatCount:
    """Count a list of OpenAI-format chat messages (and tool definitions) with the rules above.

    With ``batch`` (e.g. a caching counter's ``count_batch``) every text is counted in one call
    first, so a persistent cache is asked once rather than once per text.
    """
    if batch is not None:
        texts = chat_texts(messages, tools)
        known = dict(zip(texts, batch(texts), strict=True))
        single = count

        def count(text: str) -> int:
            found = known.get(text)
            return single(text) if found is None else found

    return ChatCount(
        messages=tuple(message_tokens(m, count, provider) for m in messages),
        tools=tool_definitions_tokens(tools, count),
    )

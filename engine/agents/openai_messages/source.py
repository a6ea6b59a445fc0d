"""The generic format (OpenAI chat messages): the fork is a new JSON file whose messages are the
system (and developer) messages, the summary as a user message, then the kept messages."""

from __future__ import annotations

import copy
from typing import Any

from ctxtop.engine.agents.openai_messages.writer import OpenAIMessagesWriter
from ctxtop.engine.compaction.handoff import OPENING
from ctxtop.engine.compaction.items import Cut, Item
from ctxtop.engine.compaction.placeholders import file_placeholder, image_placeholder
from ctxtop.engine.compaction.source import Source, is_overflow_text, text_of
from ctxtop.engine.editing.writer import encoded, list_of

_IMAGE_PARTS = ("image_url", "input_image", "image")
_FILE_PARTS = ("file", "input_file")


def _file_name(part: dict[str, Any]) -> str:
    inner = part.get("file")
    inner = inner if isinstance(inner, dict) else part
    for key in ("filename", "file_name", "name", "file_id"):
        if isinstance(inner.get(key), str):
            return str(inner[key])
    return "(unnamed file)"


class OpenAIMessagesSource(Source):
    agent = "openai-messages"
    writer_class = OpenAIMessagesWriter

    def _document(self) -> tuple[Any, list[Any]]:
        """(the object holding ``messages`` or None, the messages), as the edit writer reads it."""
        writer = self.writer
        assert isinstance(writer, OpenAIMessagesWriter)
        return writer.document()

    def items(self) -> list[Item]:
        items: list[Item] = []
        for index, message in enumerate(self._document()[1]):
            if isinstance(message, dict):
                items.append(self._item(index, message))
        return items

    def _item(self, index: int, message: dict[str, Any]) -> Item:
        role = str(message.get("role"))
        content = message.get("content")
        text = text_of(content)
        parts = [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []
        images = sum(1 for p in parts if p.get("type") in _IMAGE_PARTS)
        files = [_file_name(p) for p in parts if p.get("type") in _FILE_PARTS]
        if role in ("system", "developer"):
            return Item(index, role, "standing", text)
        if role == "tool":
            self.result(str(message.get("tool_call_id")), text)
            return Item(index, role, "tool_result", text)
        if role == "assistant":
            item = Item(index, role, "message", text)
            for call in list_of(message.get("tool_calls")):
                if isinstance(call, dict):
                    function = call.get("function")
                    function = function if isinstance(function, dict) else {}
                    item.calls.append(
                        self.call(
                            str(call.get("id")),
                            str(function.get("name")),
                            function.get("arguments"),
                        )
                    )
            if not item.calls and is_overflow_text(text) and len(text) < 400:
                item.kind = "overflow"
            return item
        if text.lstrip().startswith(("<conversation-summary>", OPENING)):
            return Item(index, role, "summary", text)
        return Item(index, role, "request", text, files=files, images=images)

    def render(self, cut: Cut, message: str, session_id: str, pre_tokens: int) -> bytes:
        container, messages = self._document()
        out = [copy.deepcopy(messages[item.key]) for item in cut.standing]
        out.append({"role": "user", "content": message})
        out.extend(_placeholders(copy.deepcopy(messages[item.key])) for item in cut.kept)
        document: Any = out
        if container is not None:
            document = dict(container, messages=out)
        return encoded(document, indent=1) + b"\n"


def _placeholders(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if not isinstance(content, list):
        return message
    parts: list[Any] = []
    for part in content:
        if isinstance(part, dict) and part.get("type") in _IMAGE_PARTS:
            parts.append({"type": "text", "text": image_placeholder()})
        elif isinstance(part, dict) and part.get("type") in _FILE_PARTS:
            parts.append({"type": "text", "text": file_placeholder(_file_name(part))})
        else:
            parts.append(part)
    message["content"] = parts
    return message

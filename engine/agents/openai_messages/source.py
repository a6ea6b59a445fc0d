"""The generic format (OpenAI chat messages): the fork is a new JSON file whose messages are the
system (and developer) messages, the summary as a user message, then the kept messages."""

from __future__ import annotations

import copy
from typing import Any

from ctxtop.engine.agents.openai_messages.entries import FILE_PARTS, IMAGE_PARTS, Entry, file_name
from ctxtop.engine.agents.openai_messages.writer import OpenAIMessagesWriter
from ctxtop.engine.compaction.handoff import OPENING
from ctxtop.engine.compaction.items import Cut, Item
from ctxtop.engine.compaction.placeholders import file_placeholder, image_placeholder
from ctxtop.engine.compaction.source import Source, is_overflow_text, text_of
from ctxtop.engine.editing.writer import encoded


class OpenAIMessagesSource(Source):
    agent = "openai-messages"
    writer_class = OpenAIMessagesWriter

    def _document(self) -> tuple[Any, list[Entry]]:
        """(the object holding ``messages`` or None, the messages), as the edit writer reads it."""
        writer = self.writer
        assert isinstance(writer, OpenAIMessagesWriter)
        return writer.document()

    def items(self) -> list[Item]:
        return [
            self._item(index, message)
            for index, message in enumerate(self._document()[1])
            if message.is_object
        ]

    def _item(self, index: int, message: Entry) -> Item:
        role = message.role
        text = text_of(message.content)
        if role in ("system", "developer"):
            return Item(index, role, "standing", text)
        if role == "tool":
            self.result(message.written_answers, text)
            return Item(index, role, "tool_result", text)
        if role == "assistant":
            item = Item(index, role, "message", text)
            for call in message.calls or ():
                item.calls.append(self.call(call.written_id, call.function_name, call.input))
            if not item.calls and is_overflow_text(text) and len(text) < 400:
                item.kind = "overflow"
            return item
        if text.lstrip().startswith(("<conversation-summary>", OPENING)):
            return Item(index, role, "summary", text)
        return Item(index, role, "request", text, files=message.files, images=message.images)

    def render(self, cut: Cut, message: str, session_id: str, pre_tokens: int) -> bytes:
        container, messages = self._document()
        out = [copy.deepcopy(messages[item.key].record) for item in cut.standing]
        out.append({"role": "user", "content": message})
        out.extend(_placeholders(copy.deepcopy(messages[item.key].record)) for item in cut.kept)
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
        if isinstance(part, dict) and part.get("type") in IMAGE_PARTS:
            parts.append({"type": "text", "text": image_placeholder()})
        elif isinstance(part, dict) and part.get("type") in FILE_PARTS:
            parts.append({"type": "text", "text": file_placeholder(file_name(part))})
        else:
            parts.append(part)
    message["content"] = parts
    return message

"""OpenCode: ``ctxtop compact`` forks into an export file as the edit does (writer.py): the
summary as the fork's first user message, then the kept messages as they are, under new ids.
OpenCode sends a session whose messages hold no compaction whole, so the model sees the
summary and the kept rounds. An OpenCode message is one step: its tool parts are the round's
calls and results.
"""

from __future__ import annotations

import time
from typing import Any

from ctxtop.engine.agents.opencode.entries import COMPACTION_PROMPT, PartRow
from ctxtop.engine.agents.opencode.writer import Copy, OpenCodeWriter, StoredMessage
from ctxtop.engine.compaction.items import Cut, Item
from ctxtop.engine.compaction.source import Source


def _texts(message: StoredMessage) -> list[PartRow]:
    return [
        message.parts[key]
        for key in sorted(message.parts)
        if message.parts[key].type == "text" and message.parts[key].text is not None
    ]


class OpenCodeSource(Source):
    agent = "opencode"
    writer_class = OpenCodeWriter

    def _context(self) -> list[StoredMessage]:
        """The messages the model sees next: from the last compaction on (the reader's)."""
        writer = self.writer
        assert isinstance(writer, OpenCodeWriter)
        messages = writer.stored().messages
        seen = {m.id.split("/")[0] for m in self.state.context} if self.state else None
        if not seen:
            return messages
        return [message for message in messages if message.id in seen]

    def items(self) -> list[Item]:
        return [self._item(index, message) for index, message in enumerate(self._context())]

    def _item(self, index: int, message: StoredMessage) -> Item:
        texts = _texts(message)
        text = "\n".join(part.text or "" for part in texts if not part.ignored)
        if message.row.role != "assistant":
            if any(part.type == "compaction" for part in message.parts.values()):
                return Item(index, "user", "meta", COMPACTION_PROMPT)
            if texts and all(part.synthetic for part in texts):
                return Item(index, "user", "meta", text)
            files = [p.file_name for p in message.parts.values() if p.type == "file"]
            return Item(index, "user", "request", text, files=files)
        if message.row.summary:
            return Item(index, "assistant", "summary", text)
        item = Item(index, "assistant", "message", text, response=message.id)
        for key in sorted(message.parts):
            call = message.parts[key].call
            if call is None:
                continue
            item.calls.append(self.call(call.call_id, call.name, call.input))
            if call.output is not None:
                self.result(call.call_id, call.output, call.is_error)
        return item

    def render(self, cut: Cut, message: str, session_id: str, pre_tokens: int) -> bytes:
        writer = self.writer
        assert isinstance(writer, OpenCodeWriter)
        context = self._context()
        kept = [context[item.key].copied() for item in cut.kept]
        asker = next((m.row.data for m in reversed(context) if m.row.role == "user"), {})
        info: dict[str, Any] = {"role": "user", "time": {"created": int(time.time() * 1000)}}
        info.update({key: asker[key] for key in ("agent", "model") if key in asker})
        summary = Copy("", info, [{"type": "text", "text": message}])
        return writer.export(writer.stored().row, [summary, *kept], session_id)

"""OpenCode: ``ctxtop compact`` forks into an export file as the edit does (writer.py): the
summary as the fork's first user message, then the kept messages as they are, under new ids.
OpenCode sends a session whose messages hold no compaction whole, so the model sees the
summary and the kept rounds. An OpenCode message is one step: its tool parts are the round's
calls and results.
"""

from __future__ import annotations

import time
from typing import Any

from ctxtop.engine.agents.opencode.export import StoredMessage
from ctxtop.engine.agents.opencode.reader import COMPACTION_PROMPT, tool_output
from ctxtop.engine.agents.opencode.writer import OpenCodeWriter
from ctxtop.engine.compaction.items import Cut, Item
from ctxtop.engine.compaction.source import Source


def _texts(message: StoredMessage) -> list[dict[str, Any]]:
    return [
        message.parts[key]
        for key in sorted(message.parts)
        if message.parts[key].get("type") == "text"
        and isinstance(message.parts[key].get("text"), str)
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
        text = "\n".join(part["text"] for part in texts if not part.get("ignored"))
        if message.data.get("role") != "assistant":
            kinds = {part.get("type") for part in message.parts.values()}
            if "compaction" in kinds:
                return Item(index, "user", "meta", COMPACTION_PROMPT)
            if texts and all(part.get("synthetic") for part in texts):
                return Item(index, "user", "meta", text)
            files = [
                str(p.get("filename") or p.get("url"))
                for p in message.parts.values()
                if p.get("type") == "file"
            ]
            return Item(index, "user", "request", text, files=files)
        if message.data.get("summary") is True:
            return Item(index, "assistant", "summary", text)
        item = Item(index, "assistant", "message", text, response=message.id)
        for key in sorted(message.parts):
            part = message.parts[key]
            call_id, tool_state = part.get("callID"), part.get("state")
            if part.get("type") != "tool" or not isinstance(call_id, str):
                continue
            if not isinstance(tool_state, dict):
                continue
            name = str(part.get("tool") or "unknown")
            item.calls.append(self.call(call_id, name, tool_state.get("input")))
            if tool_state.get("status") in ("completed", "error"):
                is_error = tool_state.get("status") == "error"
                self.result(call_id, tool_output(tool_state), is_error)
        return item

    def render(self, cut: Cut, message: str, session_id: str, pre_tokens: int) -> bytes:
        writer = self.writer
        assert isinstance(writer, OpenCodeWriter)
        context = self._context()
        kept = [context[item.key] for item in cut.kept]
        asker = next((m.data for m in reversed(context) if m.data.get("role") == "user"), {})
        info: dict[str, Any] = {"role": "user", "time": {"created": int(time.time() * 1000)}}
        info.update({key: asker[key] for key in ("agent", "model") if key in asker})
        summary = StoredMessage("", info, {"": {"type": "text", "text": message}})
        return writer.export(writer.stored().row, [summary, *kept], session_id)

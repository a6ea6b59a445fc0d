"""Qwen Code: the fork is the recording copied under the new id (as ``ctxtop edit`` does) with a
``system`` record of subtype ``chat_compression`` appended to the chain, as Qwen's own
``/compress`` writes one (0.24.4 ``ChatRecordingService.recordChatCompression``):
``systemPayload {info, compressedHistory, completedToolCallIds}``. On resume Qwen's history is
its ``compressedHistory``: the summary (a user ``Content``), then the kept contents, an
acknowledgement between them when the kept part opens with a user turn (Qwen's own history
alternates so). ``info.newTokenCount``, the prompt Qwen counts from until its next request, is
ctxtop's estimate of the fork (``QwenCodeWriter.mark``)."""

from __future__ import annotations

import copy
import uuid
from typing import Any

from ctxtop.engine.agents.qwen_code.entries import COMPRESSION, SNAPSHOT_TAG, Content
from ctxtop.engine.agents.qwen_code.writer import QwenCodeWriter, chain, history
from ctxtop.engine.compaction.handoff import OPENING
from ctxtop.engine.compaction.items import Cut, Item
from ctxtop.engine.compaction.source import Source, now_iso
from ctxtop.engine.editing.writer import jsonl_bytes
from ctxtop.engine.sessions.fork_mark import COMPACTION_KEY, CTXTOP_TRIGGER

_SUMMARIES = (SNAPSHOT_TAG, OPENING)
# The model's turn between the summary and a kept user turn (ctxtop's words).
ACKNOWLEDGED = "Understood: I continue from the summary."
_ENVELOPE = ("cwd", "version", "gitBranch")
# How the files Qwen re-attaches after its compression begin: embedded whole (one, after
# "## "), or listed by name (after "- ").
_EMBEDDED = "Recently accessed file (full current content embedded):"
_LISTED = "The following files were recently accessed before context was compacted."


def _attached(text: str) -> list[str] | None:
    """The files a re-attachment of Qwen's names (None: the text is no re-attachment)."""
    if text.startswith(_EMBEDDED):
        return [line[3:] for line in text.splitlines()[1:4] if line.startswith("## ")][:1]
    if text.startswith(_LISTED):
        return [line[2:] for line in text.splitlines()[1:] if line.startswith("- ")]
    return None


class QwenCodeSource(Source):
    agent = "qwen-code"
    writer_class = QwenCodeWriter

    def _history(self) -> list[Content]:
        return history(self.writer.entries())

    def items(self) -> list[Item]:
        items: list[Item] = []
        for index, content in enumerate(self._history()):
            item = self._item(index, content, items[-1] if items else None)
            if item is not None:
                items.append(item)
        return items

    def _item(self, index: int, content: Content, before: Item | None) -> Item | None:
        parts = content.objects
        text = content.text
        if content.role == "model":
            if (
                before is not None
                and before.kind == "summary"
                and not any(part.names_call for part in parts)
            ):
                return None  # the acknowledgement of a summary: no round of its own
            item = Item(index, "assistant", "message", text)
            for part in parts:
                if part.call is not None:
                    call = part.call
                    item.calls.append(self.call(call.id, call.name, call.args))
            return item
        results = [part.result for part in parts if part.result is not None]
        for result in results:
            self.result(result.id, result.text, result.failed)
        if results:
            return Item(index, "tool", "tool_result")
        if text.lstrip().startswith(_SUMMARIES):
            return Item(index, "user", "summary", text)
        files = _attached(text)
        if files is not None:
            return Item(index, "user", "attachment", text, files=files)
        images = sum(1 for part in parts if part.inline_image)
        return Item(
            index, "user", "request" if text.strip() or images else "meta", text, images=images
        )

    # -- the fork ------------------------------------------------------------------------

    def render(self, cut: Cut, message: str, session_id: str, pre_tokens: int) -> bytes:
        writer = self.writer
        assert isinstance(writer, QwenCodeWriter)
        contents = self._history()
        out = writer.forked({}, {}, session_id)
        compressed = [copy.deepcopy(contents[item.key].raw) for item in cut.standing]
        compressed.append({"role": "user", "parts": [{"text": message}]})
        kept = [copy.deepcopy(contents[item.key].raw) for item in cut.kept]
        if kept and kept[0].get("role") != "model":
            compressed.append({"role": "model", "parts": [{"text": ACKNOWLEDGED}]})
        compressed.extend(kept)
        path = chain(writer.entries())
        last: dict[str, Any] = path[-1].record if path else {}
        record: dict[str, Any] = {
            "uuid": str(uuid.uuid4()),
            "parentUuid": last.get("uuid"),
            "sessionId": session_id,
            "timestamp": now_iso(),
            "type": "system",
            "provenance": "system",
            **{key: last[key] for key in _ENVELOPE if key in last},
            "subtype": COMPRESSION,
            "systemPayload": {
                "info": {
                    "originalTokenCount": pre_tokens,
                    "newTokenCount": 0,  # until the preview's estimate is known (its mark)
                    "originalTokenCountIsEstimated": True,
                    "newTokenCountIsEstimated": True,
                    "compressionStatus": 1,  # Qwen's COMPRESSED
                    "triggerReason": "manual",
                },
                "compressedHistory": compressed,
                "completedToolCallIds": [],
            },
            COMPACTION_KEY: CTXTOP_TRIGGER,  # ctxtop's, not Qwen's (its "after": the fork mark)
        }
        out.append(record)
        return jsonl_bytes(out)

"""Claude Code: the fork is a new ``<uuid>.jsonl`` holding a ``compact_boundary`` (a new root),
the summary as an ``isCompactSummary`` user line, the standing attachments, then the kept lines.

The context order comes from ctxtop's reader (the active chain from the newest leaf, from the last
boundary on), the records from the file. Kept lines keep their uuids and are chained one after the
other; their assistant usage is re-estimated, since it measured the old, longer prompt (left as
is, it would make the agent think the context is still full). File attachments and images in kept
lines become placeholders naming what to re-read.
"""

from __future__ import annotations

import copy
import json
import uuid
from typing import Any

from ctxtop.engine.agents.claude_code import microcompact
from ctxtop.engine.agents.claude_code.entries import Entry
from ctxtop.engine.agents.claude_code.writer import ClaudeCodeWriter, written_usage
from ctxtop.engine.compaction.items import Cut, Item
from ctxtop.engine.compaction.placeholders import file_placeholder, image_placeholder
from ctxtop.engine.compaction.source import Source, is_overflow_text, now_iso, shifted
from ctxtop.engine.editing.writer import jsonl_bytes
from ctxtop.engine.sessions.fork_mark import COMPACTION_KEY, CTXTOP_TRIGGER, ESTIMATED, USAGE_KEY

_ENVELOPE = ("cwd", "version", "gitBranch", "userType", "entrypoint", "isSidechain")
CHARS_PER_TOKEN = 4  # Claude Code's estimate for messages it has no usage for


class ClaudeCodeSource(Source):
    agent = "claude-code"
    writer_class = ClaudeCodeWriter

    def _by_uuid(self) -> dict[str, Entry]:
        found: dict[str, Entry] = {}
        for line in self.writer.entries():
            if isinstance(line, Entry) and line.uuid is not None:
                found[line.uuid] = line  # a later line with the same uuid wins
        return found

    def items(self) -> list[Item]:
        if self.state is None:
            return []
        lines = self._by_uuid()
        items: list[Item] = []
        for message in self.state.context:
            line = lines.get(message.id)
            if line is not None:
                # Results the agent cleared since (microcompaction): the model sees the marker.
                cleared = {
                    block.tool_call_id
                    for block in message.blocks
                    if block.kind == "tool_result" and block.text == microcompact.CLEARED_RESULT
                }
                item = self._item(line, cleared)
                if item is not None:
                    items.append(item)
        return items

    def _item(self, line: Entry, cleared: set[str | None]) -> Item | None:
        key = line.uuid
        assert key is not None
        kind = line.type
        if kind == "attachment":
            label = line.attachment_label
            if line.standing:
                return Item(key, "user", "standing", label)
            name = line.attached_file
            if name is not None:
                return Item(key, "user", "attachment", f"attached {label} {name}", files=[name])
            return Item(key, "user", "meta", label)
        if kind not in ("user", "assistant") or line.message is None:
            return None
        text = line.text
        images = line.images
        if kind == "assistant":
            item = Item(key, "assistant", "message", text, images=images)
            item.response = line.response_id
            for call in line.calls():
                item.calls.append(self.call(call.call_id, call.name, call.input))
            if line.api_error and is_overflow_text(text):
                item.kind = "overflow"
            return item
        results = line.results()
        for result in results:
            call_id = result.call_id
            self.result(
                call_id,
                microcompact.CLEARED_RESULT if call_id in cleared else result.summarised_text,
                result.is_error,
            )
        if line.compact_summary:
            return Item(key, "user", "summary", text)
        if results:
            return Item(key, "user", "tool_result", text, images=images)
        if not line.is_request():
            return Item(key, "user", "meta", text, images=images)
        return Item(key, "user", "request", text, images=images)

    # -- the fork ------------------------------------------------------------------------

    def render(self, cut: Cut, message: str, session_id: str, pre_tokens: int) -> bytes:
        lines = self._by_uuid()
        envelope: dict[str, Any] = {}
        for line in lines.values():
            if line.type in ("user", "assistant"):
                envelope = {k: line.record[k] for k in _ENVELOPE if k in line.record}
                break
        envelope["sessionId"] = session_id
        standing = [copy.deepcopy(lines[item.key].record) for item in cut.standing]
        kept = [self._kept(lines[item.key].record, item) for item in cut.kept]
        # Timestamps must grow along the chain: the new lines go just before the first kept one.
        base = kept[0].get("timestamp") if kept else now_iso()
        lead = len(standing) + 2
        boundary_id, summary_id = str(uuid.uuid4()), str(uuid.uuid4())
        last_summarised = cut.summarised[-1].key if cut.summarised else None
        boundary = {
            "parentUuid": None,
            "logicalParentUuid": last_summarised,
            **envelope,
            "type": "system",
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "isMeta": False,
            "timestamp": shifted(base, -lead),
            "uuid": boundary_id,
            "level": "info",
            "compactMetadata": {"trigger": "manual", "preTokens": pre_tokens},
            COMPACTION_KEY: CTXTOP_TRIGGER,  # ctxtop's, not the user's /compact
        }
        summary = {
            "parentUuid": boundary_id,
            **envelope,
            "type": "user",
            "message": {"role": "user", "content": message},
            "isVisibleInTranscriptOnly": True,
            "isCompactSummary": True,
            "uuid": summary_id,
            "timestamp": shifted(base, 1 - lead),
        }
        out: list[Any] = [boundary, summary]
        parent = summary_id
        chars = len(message)
        for index, record in enumerate(standing + kept):
            record["parentUuid"] = parent
            record["sessionId"] = session_id
            if index < len(standing):
                record["timestamp"] = shifted(base, index + 2 - lead)
            parent = record["uuid"]
            size = len(json.dumps(record.get("message", record.get("attachment")) or ""))
            _estimate_usage(record, chars, size)
            chars += size
            out.append(record)
        out.extend(self._replacements(cut, session_id))
        return jsonl_bytes(out)

    def _kept(self, record: dict[str, Any], item: Item) -> dict[str, Any]:
        record = copy.deepcopy(record)
        record.pop("logicalParentUuid", None)
        if item.kind == "attachment" and item.files:
            attachment = record.get("attachment")
            label = attachment.get("type") if isinstance(attachment, dict) else None
            what = "file" if label in (None, "file") else str(label).replace("_", " ")
            text = "\n".join(file_placeholder(name, what) for name in item.files)
            for key in ("attachment", "type"):
                record.pop(key, None)
            record.update(type="user", isMeta=True, message={"role": "user", "content": text})
            return record
        message = record.get("message")
        if not isinstance(message, dict):
            return record
        content = message.get("content")
        if isinstance(content, list):
            message["content"] = [_without_image(part) for part in content]
        return record

    def _replacements(self, cut: Cut, session_id: str) -> list[dict[str, Any]]:
        """``content-replacement`` entries of kept results (so the agent keeps their previews)."""
        kept_ids = {call.call_id for item in cut.kept for call in item.calls}
        out: list[dict[str, Any]] = []
        for line in self.writer.entries():
            replacements = line.replacements if isinstance(line, Entry) else None
            if replacements is None:
                continue
            kept = [
                replacement
                for replacement in replacements
                if isinstance(replacement, dict)
                and kept_ids & {v for v in replacement.values() if isinstance(v, str)}
            ]
            if kept:
                out.append(dict(line.record, sessionId=session_id, replacements=kept))
        return out


def _estimate_usage(record: dict[str, Any], before: int, size: int) -> None:
    """A kept response's usage measured the old, longer prompt: left as is, the agent would think
    its context still full. It becomes Claude Code's own estimate (characters / 4) of the
    compacted prompt before it, and of the response itself, until the preview replaces it with
    ctxtop's (``ClaudeCodeWriter.mark``), marked as ctxtop's either way."""
    message = record.get("message")
    if record.get("type") != "assistant" or not isinstance(message, dict):
        return
    if isinstance(message.get("usage"), dict):
        record[USAGE_KEY] = ESTIMATED  # not the API's: no reader takes it for a request
        message["usage"] = written_usage(before // CHARS_PER_TOKEN, size // CHARS_PER_TOKEN)


def _without_image(part: Any) -> Any:
    if isinstance(part, dict) and part.get("type") == "image":
        source = part.get("source")
        media = source.get("media_type") if isinstance(source, dict) else None
        return {"type": "text", "text": image_placeholder(str(media or ""))}
    if isinstance(part, dict) and part.get("type") == "tool_result":
        inner = part.get("content")
        if isinstance(inner, list):
            return dict(part, content=[_without_image(p) for p in inner])
    return part

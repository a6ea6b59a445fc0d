"""Codex: the fork is the rollout copied under the new id (as ``ctxtop edit`` does) with a
``compacted`` record appended whose ``replacement_history`` is the standing items, the summary
(a user message) and the kept items: what Codex itself writes on ``/compact``, and what it
rebuilds the prompt from on resume."""

from __future__ import annotations

import copy
from typing import Any

from ctxtop.engine.agents.codex.entries import Item as Entry
from ctxtop.engine.agents.codex.entries import Meta, TurnContext
from ctxtop.engine.agents.codex.plugin import SUMMARY_OPENING
from ctxtop.engine.agents.codex.writer import CodexWriter
from ctxtop.engine.compaction.handoff import OPENING
from ctxtop.engine.compaction.items import Cut, Item
from ctxtop.engine.compaction.placeholders import image_placeholder
from ctxtop.engine.compaction.source import Source, is_overflow_text, now_iso, text_of
from ctxtop.engine.editing.writer import jsonl_bytes
from ctxtop.engine.sessions.fork_mark import COMPACTION_KEY, CTXTOP_TRIGGER

# How Codex's own summaries begin (a handoff note), and ctxtop's.
SUMMARY_PREFIXES = (SUMMARY_OPENING, OPENING)


def _output_text(output: Any) -> str:
    return text_of(output) if not isinstance(output, dict) else str(output)


class CodexSource(Source):
    agent = "codex"
    writer_class = CodexWriter

    def _context(self) -> list[Entry]:
        writer = self.writer
        assert isinstance(writer, CodexWriter)
        return writer.context_entries()

    def model(self) -> str | None:
        model = super().model()
        for found in self.writer.entries():
            if type(found) is TurnContext:
                model = found.model or model or None
        return model

    def cwd(self) -> str | None:
        for found in self.writer.entries():
            if type(found) is Meta:
                return found.cwd
        return super().cwd()

    def items(self) -> list[Item]:
        items: list[Item] = []
        for index, entry in enumerate(self._context()):
            item = self._item(index, entry)
            if item is not None:
                items.append(item)
        return items

    def _item(self, index: int, entry: Entry) -> Item | None:
        kind = entry.item
        if entry.type == "compaction":
            return Item(index, "user", "summary", "(an encrypted summary by the model provider)")
        if kind == "call":
            call = self.call(entry.logged_id, entry.logged_name, entry.logged_input)
            return Item(index, "assistant", "message", "", calls=[call])
        if kind == "output":
            self.result(entry.logged_id, _output_text(entry.output), entry.failed)
            return Item(index, "tool", "tool_result")
        if kind != "message":
            return None
        role = entry.written_role
        text = text_of(entry.content)
        if role in ("system", "developer"):
            return Item(index, role, "standing", text)
        if role == "assistant":
            overflow = is_overflow_text(text) and len(text) < 400
            return Item(index, role, "overflow" if overflow else "message", text)
        stripped = text.lstrip()
        if entry.injected:
            return Item(index, role, "standing", text)
        if stripped.startswith(SUMMARY_PREFIXES):
            return Item(index, role, "summary", text)
        return Item(index, role, "request" if stripped else "meta", text, images=entry.images)

    def render(self, cut: Cut, message: str, session_id: str, pre_tokens: int) -> bytes:
        writer = self.writer
        assert isinstance(writer, CodexWriter)
        context = self._context()
        copied = writer.forked({}, {}, session_id)
        summary = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": message}],
        }
        history = [copy.deepcopy(context[item.key].payload) for item in cut.standing]
        history.append(summary)
        history.extend(
            _without_images(copy.deepcopy(context[item.key].payload)) for item in cut.kept
        )
        compacted: dict[str, Any] = {"timestamp": now_iso()}
        # Newer rollouts number their records; Codex refuses to resume one whose last lacks it.
        ordinals = [r["ordinal"] for r in copied if isinstance(r, dict) and "ordinal" in r]
        if ordinals and all(isinstance(n, int) for n in ordinals):
            compacted["ordinal"] = max(ordinals) + 1
        compacted["type"] = "compacted"
        compacted[COMPACTION_KEY] = (
            CTXTOP_TRIGGER  # ctxtop's, not Codex's (its "after": the fork mark)
        )
        compacted["payload"] = {"message": message, "replacement_history": history}
        copied.append(compacted)
        return jsonl_bytes(copied)


def _without_images(payload: dict[str, Any]) -> dict[str, Any]:
    content = payload.get("content")
    if isinstance(content, list):
        payload["content"] = [
            {"type": "input_text", "text": image_placeholder()}
            if isinstance(part, dict) and part.get("type") == "input_image"
            else part
            for part in content
        ]
    return payload

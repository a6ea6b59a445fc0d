"""Pi: the fork is the session copied under the new id (as ``ctxtop edit`` does) with a
``compaction`` entry appended, as Pi's own ``/compact`` writes one (0.73.1
``SessionManager.appendCompaction``): ``summary``, ``firstKeptEntryId``, ``tokensBefore`` and
``details`` (the files read and modified), a child of the last entry. On resume Pi sends the
summary, then the entries from ``firstKeptEntryId`` up to the compaction (``buildSessionContext``).

The kept entries must so be the end of the path to the compaction. When they are not (the cut
fell inside a turn, whose request is kept; an overflow error left out), the compaction goes on a
branch, as Pi's ``/tree`` makes one: from the entry before the first one not kept, the rest of
the kept entries copied under new ids, then the compaction. The old branch stays in the file.
With nothing kept, ``firstKeptEntryId`` is the compaction's own id (no entry before it is sent).
"""

from __future__ import annotations

import copy
from typing import Any

from ctxtop.engine.agents.pi.writer import PiWriter, entry_path, new_entry_id, sent_entries
from ctxtop.engine.compaction.items import Cut, Item
from ctxtop.engine.compaction.source import Source, is_overflow_text, now_iso, text_of
from ctxtop.engine.editing.writer import jsonl_bytes, list_of
from ctxtop.engine.sessions.fork_mark import COMPACTION_KEY, CTXTOP_TRIGGER

# Pi's tools that read and change files (``extractFileOpsFromMessage``), by their path argument.
_READS = ("read",)
_CHANGES = ("write", "edit")


class PiSource(Source):
    agent = "pi"
    writer_class = PiWriter

    def _path(self) -> list[dict[str, Any]]:
        return entry_path(self.writer.records())

    def items(self) -> list[Item]:
        items: list[Item] = []
        for entry in sent_entries(self._path()):
            item = self._item(entry)
            if item is not None:
                items.append(item)
        return items

    def _item(self, entry: dict[str, Any]) -> Item | None:
        key, kind = entry["id"], entry.get("type")
        if kind == "compaction":
            return Item(key, "user", "summary", str(entry.get("summary") or ""))
        if kind == "branch_summary":
            return Item(key, "user", "meta", str(entry.get("summary") or ""))
        if kind == "custom_message":
            return Item(key, "user", "meta", text_of(entry.get("content")))
        message = entry.get("message")
        if not isinstance(message, dict):
            return None
        role, content = message.get("role"), message.get("content")
        text = text_of(content)
        if role == "assistant":
            return self._assistant(key, message, text)
        if role == "toolResult":
            self.result(str(message.get("toolCallId")), text, message.get("isError") is True)
            return Item(key, "tool", "tool_result")
        if role == "user":
            images = sum(
                1 for p in list_of(content) if isinstance(p, dict) and p.get("type") == "image"
            )
            return Item(
                key, "user", "request" if text.strip() or images else "meta", text, images=images
            )
        if role == "bashExecution":  # a ``!command`` the user ran
            if message.get("excludeFromContext"):
                return None
            return Item(
                key, "user", "meta", f"{message.get('command')}\n{message.get('output') or ''}"
            )
        if role == "compactionSummary":
            return Item(key, "user", "summary", str(message.get("summary") or ""))
        return Item(key, "user", "meta", text or str(message.get("summary") or ""))

    def _assistant(self, key: str, message: dict[str, Any], text: str) -> Item:
        item = Item(key, "assistant", "message", text)
        item.response = key  # one entry per model response
        for part in list_of(message.get("content")):
            if isinstance(part, dict) and part.get("type") == "toolCall":
                name = str(part.get("name") or "unknown")
                item.calls.append(self.call(str(part.get("id")), name, part.get("arguments")))
        error = str(message.get("errorMessage") or "")
        if message.get("stopReason") == "error" and is_overflow_text(error):
            item.kind, item.text = "overflow", error
        return item

    # -- the fork ------------------------------------------------------------------------

    def render(self, cut: Cut, message: str, session_id: str, pre_tokens: int) -> bytes:
        writer = self.writer
        assert isinstance(writer, PiWriter)
        out = writer.forked({}, {}, session_id)
        path = self._path()
        taken = {str(r.get("id")) for r in out if isinstance(r, dict)}
        kept = [str(item.key) for item in cut.kept]
        parent, copied = _attachment(path, kept, {str(item.key) for item in self.items()})
        by_id = {entry["id"]: entry for entry in path}
        for entry_id in copied:
            entry = copy.deepcopy(by_id[entry_id])
            entry["id"], entry["parentId"] = new_entry_id(taken), parent
            parent = entry["id"]
            out.append(entry)
        compaction_id = new_entry_id(taken)
        out.append(
            {
                "type": "compaction",
                "id": compaction_id,
                "parentId": parent,
                "timestamp": now_iso(),  # after every kept answer: Pi takes their usage as stale
                "summary": message,
                "firstKeptEntryId": kept[0] if kept else compaction_id,
                "tokensBefore": pre_tokens,
                "details": self._files(path, cut),
                "fromHook": False,
                COMPACTION_KEY: CTXTOP_TRIGGER,  # ctxtop's, not Pi's (its "after": the fork mark)
            }
        )
        return jsonl_bytes(out)

    @staticmethod
    def _files(path: list[dict[str, Any]], cut: Cut) -> dict[str, list[str]]:
        """The files read and modified in what is summarised, with the previous compaction's
        (Pi's ``details``, which its next compaction carries on)."""
        read: set[str] = set()
        changed: set[str] = set()
        previous = next((e for e in reversed(path) if e.get("type") == "compaction"), None)
        details = previous.get("details") if previous and not previous.get("fromHook") else None
        if isinstance(details, dict):
            read.update(f for f in list_of(details.get("readFiles")) if isinstance(f, str))
            changed.update(f for f in list_of(details.get("modifiedFiles")) if isinstance(f, str))
        for item in cut.summarised:
            for call in item.calls:
                where = call.input.get("path") if isinstance(call.input, dict) else None
                if isinstance(where, str) and call.name in _READS:
                    read.add(where)
                elif isinstance(where, str) and call.name in _CHANGES:
                    changed.add(where)
        return {"readFiles": sorted(read - changed), "modifiedFiles": sorted(changed)}


def _attachment(
    path: list[dict[str, Any]], kept: list[str], shown: set[str]
) -> tuple[str | None, list[str]]:
    """Where the compaction goes, and the kept entries to copy before it: the last entry and
    none when the kept entries end the path (entries the model is not sent, and compactions,
    do not count); else the entry before the first one that is sent but not kept, and the
    kept entries from there."""
    if not kept:
        return (path[-1]["id"] if path else None), []
    ids = [entry["id"] for entry in path]
    matched = 0
    for index in range(ids.index(kept[0]), len(path)):
        entry = path[index]
        if entry.get("type") == "compaction" or entry["id"] not in shown:
            continue
        if matched < len(kept) and entry["id"] == kept[matched]:
            matched += 1
            continue
        return ids[index - 1], kept[matched:]
    return ids[-1], kept[matched:]

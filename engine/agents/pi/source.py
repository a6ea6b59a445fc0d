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

from ctxtop.engine.agents.pi.entries import (
    Answer,
    BashRun,
    BranchSummary,
    CompactionEntry,
    CustomMessage,
    MessageEntry,
    PiEntry,
    ToolResult,
)
from ctxtop.engine.agents.pi.writer import PiWriter, entry_path, new_entry_id, sent_entries
from ctxtop.engine.compaction.items import Cut, Item
from ctxtop.engine.compaction.source import Source, is_overflow_text, now_iso
from ctxtop.engine.editing.writer import jsonl_bytes
from ctxtop.engine.sessions.fork_mark import COMPACTION_KEY, CTXTOP_TRIGGER

# Pi's tools that read and change files (``extractFileOpsFromMessage``), by their path argument.
_READS = ("read",)
_CHANGES = ("write", "edit")


class PiSource(Source):
    agent = "pi"
    writer_class = PiWriter

    def _path(self) -> list[PiEntry]:
        return entry_path(self.writer.entries())

    def items(self) -> list[Item]:
        items: list[Item] = []
        for sent in sent_entries(self._path()):
            item = self._item(sent)
            if item is not None:
                items.append(item)
        return items

    def _item(self, sent: PiEntry) -> Item | None:
        key = str(sent.id)
        if isinstance(sent, CompactionEntry):
            return Item(key, "user", "summary", sent.summary)
        if isinstance(sent, BranchSummary):
            return Item(key, "user", "meta", sent.summary)
        if isinstance(sent, CustomMessage):
            return Item(key, "user", "meta", sent.said())
        if not isinstance(sent, MessageEntry):
            return None  # a message entry whose message is no object
        text = sent.said()
        if isinstance(sent, Answer):
            return self._answer(key, sent, text)
        if isinstance(sent, ToolResult):
            self.result(sent.result_key, text, sent.is_error)
            return Item(key, "tool", "tool_result")
        if isinstance(sent, BashRun):  # a ``!command`` the user ran
            if sent.excluded:
                return None
            return Item(key, "user", "meta", f"{sent.command}\n{sent.output}")
        if sent.role == "user":
            images = sent.images()
            return Item(
                key, "user", "request" if text.strip() or images else "meta", text, images=images
            )
        if sent.role == "compactionSummary":
            return Item(key, "user", "summary", sent.summary)
        return Item(key, "user", "meta", text or sent.summary)

    def _answer(self, key: str, answer: Answer, text: str) -> Item:
        item = Item(key, "assistant", "message", text)
        item.response = key  # one entry per model response
        for call in answer.calls():
            item.calls.append(self.call(call.key, call.name, call.arguments))
        if answer.error is not None and is_overflow_text(answer.error):
            item.kind, item.text = "overflow", answer.error
        return item

    # -- the fork ------------------------------------------------------------------------

    def render(self, cut: Cut, message: str, session_id: str, pre_tokens: int) -> bytes:
        writer = self.writer
        assert isinstance(writer, PiWriter)
        out = writer.forked({}, {}, session_id)
        path = self._path()
        taken = {e.id for e in writer.entries() if isinstance(e, PiEntry) and e.id is not None}
        kept = [str(item.key) for item in cut.kept]
        parent, copied = _attachment(path, kept, {str(item.key) for item in self.items()})
        by_id = {str(e.id): e for e in path}
        for entry_id in copied:
            record = copy.deepcopy(by_id[entry_id].record)
            record["id"], record["parentId"] = new_entry_id(taken), parent
            parent = record["id"]
            out.append(record)
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
    def _files(path: list[PiEntry], cut: Cut) -> dict[str, list[str]]:
        """The files read and modified in what is summarised, with the previous compaction's
        (Pi's ``details``, which its next compaction carries on)."""
        previous = next((e for e in reversed(path) if isinstance(e, CompactionEntry)), None)
        read = set(previous.read_files) if previous is not None else set()
        changed = set(previous.modified_files) if previous is not None else set()
        for item in cut.summarised:
            for call in item.calls:
                where = call.input.get("path") if isinstance(call.input, dict) else None
                if isinstance(where, str) and call.name in _READS:
                    read.add(where)
                elif isinstance(where, str) and call.name in _CHANGES:
                    changed.add(where)
        return {"readFiles": sorted(read - changed), "modifiedFiles": sorted(changed)}


def _attachment(
    path: list[PiEntry], kept: list[str], shown: set[str]
) -> tuple[str | None, list[str]]:
    """Where the compaction goes, and the kept entries to copy before it: the last entry and
    none when the kept entries end the path (entries the model is not sent, and compactions,
    do not count); else the entry before the first one that is sent but not kept, and the
    kept entries from there."""
    if not kept:
        return (path[-1].id if path else None), []
    ids = [str(entry.id) for entry in path]
    matched = 0
    for index in range(ids.index(kept[0]), len(path)):
        entry = path[index]
        if isinstance(entry, CompactionEntry) or ids[index] not in shown:
            continue
        if matched < len(kept) and ids[index] == kept[matched]:
            matched += 1
            continue
        return ids[index - 1], kept[matched:]
    return ids[-1], kept[matched:]

"""Pi: a fork is a new session file beside the source, ``<time>_<new id>.jsonl``, its header
naming the new id and the source as ``parentSession`` (as Pi's own ``/fork`` writes it); every
entry is kept, so its tree and ids stay. Pi resumes it by id: ``pi --session <id>``.

What Pi sends on resume is the path from the last entry back to the root, the last compaction on
it replacing what came before ``firstKeptEntryId`` (``buildSessionContext``): only those tool
uses are scanned. A result is a ``toolResult`` message, replaced by one text part; an input is a
``toolCall`` block's ``arguments``.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from ctxtop.engine.agents.pi.entries import (
    SENT,
    Answer,
    CallPart,
    CompactionEntry,
    Header,
    MessageEntry,
    PiEntry,
    ToolResult,
    entry,
)
from ctxtop.engine.compaction.source import shifted
from ctxtop.engine.editing.turns import Scan, ScanBuilder
from ctxtop.engine.editing.writer import Writer, jsonl_bytes, jsonl_records
from ctxtop.engine.sessions.entries import typed


def entry_path(entries: Sequence[Any]) -> list[PiEntry]:
    """The entries from the root to the leaf (the last entry on the tree), in order."""
    tree = {
        e.id: e for e in entries if isinstance(e, PiEntry) and e.id is not None and e.parent_written
    }
    leaf = next((e for e in reversed(entries) if isinstance(e, PiEntry) and e.id in tree), None)
    path: list[PiEntry] = []
    seen: set[str] = set()
    while leaf is not None and leaf.id is not None and leaf.id not in seen:
        seen.add(leaf.id)
        path.append(leaf)
        leaf = tree.get(leaf.parent) if leaf.parent is not None else None
    path.reverse()
    return path


def sent_entries(path: list[PiEntry]) -> list[PiEntry]:
    """The entries whose messages Pi sends, in order: the last compaction (its summary) first,
    then the entries from its ``firstKeptEntryId`` on, itself left out."""
    last = max((i for i, e in enumerate(path) if isinstance(e, CompactionEntry)), default=None)
    if last is None:
        return [e for e in path if e.kind in SENT]
    compaction = path[last]
    assert isinstance(compaction, CompactionEntry)
    kept = compaction.first_kept
    start = next((i for i, e in enumerate(path[:last]) if e.id == kept), last)
    rest = path[start:last] + path[last + 1 :]
    return [compaction, *(e for e in rest if e.kind in SENT)]


def new_entry_id(taken: set[str]) -> str:
    """A new entry id (8 hex digits, as Pi's ``generateId``) not in ``taken``, which it joins."""
    while True:
        entry_id = uuid.uuid4().hex[:8]
        if entry_id not in taken:
            taken.add(entry_id)
            return entry_id


def user_entry(entry_id: str, parent: str | None, timestamp: Any, text: str) -> dict[str, Any]:
    """A user message entry of ``text``, as Pi's ``appendMessage`` writes one."""
    moment = shifted(timestamp, 0)
    milliseconds = int(datetime.fromisoformat(moment.replace("Z", "+00:00")).timestamp() * 1000)
    message = {
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "timestamp": milliseconds,
    }
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": moment,
        "message": message,
    }


class PiWriter(Writer):
    agent = "pi"
    resumable = True
    supports_restore = True
    entry_of = staticmethod(entry)

    def scan(self) -> Scan:
        found = ScanBuilder()
        for sent in sent_entries(entry_path(self.entries())):
            if isinstance(sent, Answer):
                for call in sent.calls():
                    if call.id:
                        found.call(call.id, call.name, call.arguments)
            elif isinstance(sent, ToolResult):
                use = found.use(sent.result_key)
                if use is not None:
                    use.result = sent.result_text()
            elif isinstance(sent, MessageEntry) and sent.role == "user":
                found.new_turn()
        return found.scan()

    def render(self, results: dict[str, str], inputs: dict[str, Any], session_id: str) -> bytes:
        return jsonl_bytes(self.forked(results, inputs, session_id))

    def forked(self, results: dict[str, str], inputs: dict[str, Any], session_id: str) -> list[Any]:
        """The fork's records: the session's, the header under ``session_id`` (its parent the
        session), with ``results`` and ``inputs`` replaced by call id."""
        out: list[Any] = []
        for line in self.entries():
            if not isinstance(line, PiEntry):
                out.append(line)  # a blank or bad line, kept as it is
            elif isinstance(line, Header):
                out.append({**line.record, "id": session_id, "parentSession": str(self.path)})
            else:
                out.append(_rewritten(line, results, inputs))
        return out

    def with_message(self, fork: bytes, line: int, text: str) -> bytes:
        """The message is a user entry, the child of the compaction at ``line`` and the parent
        of its children: Pi sends it after the summary and the entries the compaction kept,
        before anything said since."""
        entries = typed(jsonl_records(self.path, fork), entry)
        compaction = entries[line - 1]
        if not isinstance(compaction, CompactionEntry) or compaction.id is None:
            raise ValueError(f"line {line} is no compaction")
        taken = {e.id for e in entries if isinstance(e, PiEntry) and e.id is not None}
        added = user_entry(new_entry_id(taken), compaction.id, compaction.timestamp, text)
        out = [e.record if isinstance(e, PiEntry) else e for e in entries]
        for index, later in enumerate(entries[line:], line):
            if isinstance(later, PiEntry) and later.parent == compaction.id:
                out[index] = {**later.record, "parentId": added["id"]}
        out.insert(line, added)
        return jsonl_bytes(out)

    def fork_name(self, session_id: str) -> str:
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H-%M-%S-%f")[:-3] + "Z"
        return f"{stamp}_{session_id}.jsonl"

    def resume_command(self, session_id: str, cwd: str | None) -> str | None:
        return f"pi --session {session_id}"


def _rewritten(line: PiEntry, results: dict[str, str], inputs: dict[str, Any]) -> Any:
    """``line``'s record, or a copy with its tool result or its calls' inputs replaced."""
    record = line.record
    if isinstance(line, ToolResult) and line.call_id in results:
        content = [{"type": "text", "text": results[str(line.call_id)]}]
        return {**record, "message": {**record["message"], "content": content}}
    if not isinstance(line, Answer) or not any(call.id in inputs for call in line.calls()):
        return record
    content = [
        {**part.raw, "arguments": inputs[part.id]}
        if isinstance(part, CallPart) and part.id in inputs
        else part.raw
        for part in line.parts
    ]
    return {**record, "message": {**record["message"], "content": content}}

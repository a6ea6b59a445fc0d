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
from datetime import UTC, datetime
from typing import Any

from ctxtop.engine.compaction.source import shifted
from ctxtop.engine.editing.turns import Scan, ScanBuilder, result_text
from ctxtop.engine.editing.writer import Writer, jsonl_bytes, jsonl_records, list_of, text_id

# Entries that put a message on the context (``buildSessionContext``'s ``appendMessage``).
SENT = ("message", "custom_message", "branch_summary")


def entry_path(records: list[Any]) -> list[dict[str, Any]]:
    """The entries from the root to the leaf (the last entry), in order."""
    entries = {
        record["id"]: record
        for record in records
        if isinstance(record, dict) and isinstance(record.get("id"), str) and "parentId" in record
    }
    leaf = next(
        (r for r in reversed(records) if isinstance(r, dict) and text_id(r.get("id")) in entries),
        None,
    )
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    while isinstance(leaf, dict) and leaf["id"] not in seen:
        seen.add(leaf["id"])
        path.append(leaf)
        leaf = entries.get(text_id(leaf.get("parentId")))  # (a log may hold a list there)
    path.reverse()
    return path


def sent_entries(path: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries whose messages Pi sends, in order: the last compaction (its summary) first,
    then the entries from its ``firstKeptEntryId`` on, itself left out."""
    last = max((i for i, e in enumerate(path) if e.get("type") == "compaction"), default=None)
    if last is None:
        return [e for e in path if e.get("type") in SENT]
    kept = path[last].get("firstKeptEntryId")
    start = next((i for i, e in enumerate(path[:last]) if e["id"] == kept), last)
    rest = path[start:last] + path[last + 1 :]
    return [path[last], *(e for e in rest if e.get("type") in SENT)]


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

    def scan(self) -> Scan:
        found = ScanBuilder()
        for entry in sent_entries(entry_path(self.records())):
            message = entry.get("message") if entry.get("type") == "message" else None
            if not isinstance(message, dict):
                continue
            role = message.get("role")
            if role == "user":
                found.new_turn()
            elif role == "assistant":
                for part in list_of(message.get("content")):
                    if not isinstance(part, dict):
                        continue
                    call_id = text_id(part.get("id"))
                    if part.get("type") == "toolCall" and call_id:
                        name = str(part.get("name") or "unknown")
                        found.call(call_id, name, part.get("arguments"))
            elif role == "toolResult":
                use = found.use(str(message.get("toolCallId")))
                if use is not None:
                    use.result = result_text(message.get("content"))
        return found.scan()

    def render(self, results: dict[str, str], inputs: dict[str, Any], session_id: str) -> bytes:
        return jsonl_bytes(self.forked(results, inputs, session_id))

    def forked(self, results: dict[str, str], inputs: dict[str, Any], session_id: str) -> list[Any]:
        """The fork's records: the session's, the header under ``session_id`` (its parent the
        session), with ``results`` and ``inputs`` replaced by call id."""
        out: list[Any] = []
        for record in self.records():
            if isinstance(record, dict) and record.get("type") == "session":
                record = {**record, "id": session_id, "parentSession": str(self.path)}
            sent = isinstance(record, dict) and record.get("type") == "message"
            message = record.get("message") if sent else None
            if isinstance(message, dict):
                message = self._message(message, results, inputs)
                record = {**record, "message": message}
            out.append(record)
        return out

    @staticmethod
    def _message(
        message: dict[str, Any], results: dict[str, str], inputs: dict[str, Any]
    ) -> dict[str, Any]:
        call_id = text_id(message.get("toolCallId"))
        if message.get("role") == "toolResult" and call_id in results:
            return {**message, "content": [{"type": "text", "text": results[str(call_id)]}]}
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            return message
        content = []
        for part in message["content"]:
            part_id = text_id(part.get("id")) if isinstance(part, dict) else None
            if part_id in inputs and part.get("type") == "toolCall":
                part = {**part, "arguments": inputs[str(part_id)]}
            content.append(part)
        return {**message, "content": content}

    def with_message(self, fork: bytes, line: int, text: str) -> bytes:
        """The message is a user entry, the child of the compaction at ``line`` and the parent
        of its children: Pi sends it after the summary and the entries the compaction kept,
        before anything said since."""
        records = jsonl_records(self.path, fork)
        compaction = records[line - 1]
        if not isinstance(compaction, dict) or compaction.get("type") != "compaction":
            raise ValueError(f"line {line} is no compaction")
        taken = {str(r.get("id")) for r in records if isinstance(r, dict)}
        entry = user_entry(new_entry_id(taken), compaction["id"], compaction.get("timestamp"), text)
        for record in records[line:]:
            if isinstance(record, dict) and record.get("parentId") == compaction["id"]:
                record["parentId"] = entry["id"]
        records.insert(line, entry)
        return jsonl_bytes(records)

    def fork_name(self, session_id: str) -> str:
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H-%M-%S-%f")[:-3] + "Z"
        return f"{stamp}_{session_id}.jsonl"

    def resume_command(self, session_id: str, cwd: str | None) -> str | None:
        return f"pi --session {session_id}"

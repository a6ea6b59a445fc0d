"""Pi: a fork is a new session file beside the source, ``<time>_<new id>.jsonl``, its header
naming the new id and the source as ``parentSession`` (as Pi's own ``/fork`` writes it); every
entry is kept, so its tree and ids stay. Pi resumes it by id: ``pi --session <id>``.

What Pi sends on resume is the path from the last entry back to the root, the last compaction on
it replacing what came before ``firstKeptEntryId`` (``buildSessionContext``): only those tool
uses are scanned. A result is a ``toolResult`` message, replaced by one text part; an input is a
``toolCall`` block's ``arguments``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from engine.editing.cycles import Scan, ToolUse, result_text
from engine.editing.writer import Writer, jsonl_bytes, jsonl_records, list_of, text_id


def _context(records: list[Any]) -> list[dict[str, Any]]:
    """The entries Pi puts on the context on resume, in order."""
    entries = {
        record["id"]: record
        for record in records
        if isinstance(record, dict) and isinstance(record.get("id"), str) and "parentId" in record
    }
    leaf = next(
        (r for r in reversed(records) if isinstance(r, dict) and r.get("id") in entries), None
    )
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    while isinstance(leaf, dict) and leaf["id"] not in seen:
        seen.add(leaf["id"])
        path.append(leaf)
        leaf = entries.get(leaf.get("parentId"))
    path.reverse()
    last = max((i for i, e in enumerate(path) if e.get("type") == "compaction"), default=None)
    if last is None:
        return path
    kept = path[last].get("firstKeptEntryId")
    start = next((i for i, e in enumerate(path[:last]) if e["id"] == kept), last)
    return path[start:last] + path[last + 1 :]


class PiWriter(Writer):
    agent = "pi"
    resumable = True

    def scan(self) -> Scan:
        uses: dict[str, ToolUse] = {}
        cycle = 0
        for entry in _context(jsonl_records(self.path, self.data)):
            message = entry.get("message") if entry.get("type") == "message" else None
            if not isinstance(message, dict):
                continue
            role = message.get("role")
            if role == "user":
                cycle += 1
            elif role == "assistant":
                for part in list_of(message.get("content")):
                    call_id = text_id(part.get("id")) if isinstance(part, dict) else None
                    if part.get("type") == "toolCall" and call_id and call_id not in uses:
                        name = str(part.get("name") or "unknown")
                        uses[call_id] = ToolUse(
                            call_id, name, part.get("arguments"), None, cycle, len(uses)
                        )
            elif role == "toolResult":
                use = uses.get(str(message.get("toolCallId")))
                if use is not None:
                    use.result = result_text(message.get("content"))
        return Scan(list(uses.values()), cycle)

    def render(self, results: dict[str, str], inputs: dict[str, Any], session_id: str) -> bytes:
        records = jsonl_records(self.path, self.data)
        out: list[Any] = []
        for record in records:
            if isinstance(record, dict) and record.get("type") == "session":
                record = {**record, "id": session_id, "parentSession": str(self.path)}
            message = record.get("message") if isinstance(record, dict) else None
            if isinstance(message, dict):
                message = self._message(message, results, inputs)
                record = {**record, "message": message}
            out.append(record)
        return jsonl_bytes(out)

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

    def fork_name(self, session_id: str) -> str:
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H-%M-%S-%f")[:-3] + "Z"
        return f"{stamp}_{session_id}.jsonl"

    def resume_command(self, session_id: str, cwd: str | None) -> str | None:
        return f"pi --session {session_id}"

"""Codex: a new rollout file next to the source with the new id in ``session_meta``.

The prompt Codex rebuilds on resume is the last ``compacted.replacement_history`` (if any) plus
the items after it, so only those tool uses are scanned; a result is replaced wherever it
appears (``function_call_output`` / ``custom_tool_call_output`` items, in the history or after).
Every string equal to the old session id (``session_meta.id``, ``session_id``, ``thread_id``)
becomes the new id.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from ctxtop.engine.agents.codex.entries import CALLS, OUTPUTS, Compacted, Item, Meta, entry
from ctxtop.engine.editing.turns import Scan, ScanBuilder, result_text
from ctxtop.engine.editing.writer import (
    Writer,
    dumps,
    jsonl_bytes,
    jsonl_records,
    renamed_and_replaced,
    text_id,
)


class CodexWriter(Writer):
    agent = "codex"
    resumable = True
    supports_restore = True
    entry_of = staticmethod(entry)

    def context_items(self) -> list[dict[str, Any]]:
        """The response items Codex would send on resume, in order."""
        return [item.payload for item in self.context_entries()]

    def context_entries(self) -> list[Item]:
        """``context_items``' entries."""
        items: list[Item] = []
        for found in self.entries():
            if type(found) is Compacted:
                history = found.history
                items = [i for i in history if i is not None] if history is not None else []
            elif type(found) is Item:
                items.append(found)
        return items

    def scan(self) -> Scan:
        found = ScanBuilder()
        for item in self.context_entries():
            if item.turn_start:
                found.new_turn()
            elif item.item == "call":
                found.call(item.logged_id, item.logged_name, item.logged_input)
            elif item.item == "output":
                use = found.use(item.logged_id)
                if use is not None:
                    use.result = result_text(item.output)
        return found.scan()

    def session_id(self) -> str | None:
        """The session's id (its first ``session_meta``'s)."""
        for found in self.entries():
            if type(found) is Meta and found.session_id is not None:
                return found.session_id
        return None

    def session_records(self) -> list[Any]:
        """The session's lines as written (a blank or bad line as its bytes)."""
        return [found if type(found) is bytes else found.record for found in self.entries()]

    def render(self, results: dict[str, str], inputs: dict[str, Any], session_id: str) -> bytes:
        return jsonl_bytes(self.forked(results, inputs, session_id))

    def forked(self, results: dict[str, str], inputs: dict[str, Any], session_id: str) -> list[Any]:
        """The fork's records: copies of the session's, under ``session_id``, with ``results``
        and ``inputs`` replaced by call id."""

        def replace(value: dict[str, Any]) -> None:
            call_id = text_id(value.get("call_id"))
            if value.get("type") in OUTPUTS and call_id in results:
                value["output"] = results[str(call_id)]
            elif value.get("type") in CALLS and call_id in inputs:
                key = "arguments" if "arguments" in value else "input"
                value[key] = dumps(inputs[str(call_id)])

        return renamed_and_replaced(self.session_records(), self.session_id(), session_id, replace)

    def with_message(self, fork: bytes, line: int, text: str) -> bytes:
        """The message goes right after the ``compacted`` record, as the first item after its
        replacement history (what Codex rebuilds the prompt from): 0.171 drops a replacement
        history with an item added to it and sends the whole rollout instead. Later records
        are numbered one further (newer rollouts number every record)."""
        records = jsonl_records(self.path, fork)
        compacted = records[line - 1]
        if not isinstance(compacted, dict) or compacted.get("type") != "compacted":
            raise ValueError(f"line {line} is no compaction")
        message: dict[str, Any] = {"timestamp": compacted.get("timestamp")}
        ordinal = compacted.get("ordinal")
        if isinstance(ordinal, int):
            message["ordinal"] = ordinal + 1
            for record in records[line:]:
                if isinstance(record, dict) and isinstance(record.get("ordinal"), int):
                    record["ordinal"] += 1
        message["type"] = "response_item"
        message["payload"] = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": text}],
        }
        records.insert(line, message)
        return jsonl_bytes(records)

    def fork_name(self, session_id: str) -> str:
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H-%M-%S")
        return f"rollout-{stamp}-{session_id}.jsonl"

    def resume_command(self, session_id: str, cwd: str | None) -> str | None:
        return f"codex resume {session_id}"


def is_codex(data: bytes) -> bool:
    """True for a rollout file (its first record is ``session_meta``)."""
    first = data.split(b"\n", 1)[0]
    try:
        record = json.loads(first)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return False
    return isinstance(record, dict) and record.get("type") == "session_meta"

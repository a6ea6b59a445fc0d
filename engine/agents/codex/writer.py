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

from ctxtop.engine.agents.codex.plugin import INJECTED as _INJECTED
from ctxtop.engine.editing.turns import Scan, ScanBuilder, result_text
from ctxtop.engine.editing.writer import (
    Writer,
    dumps,
    jsonl_bytes,
    jsonl_records,
    renamed_and_replaced,
    text_id,
)

_OUTPUTS = ("function_call_output", "custom_tool_call_output")
_CALLS = ("function_call", "custom_tool_call", "local_shell_call")


def _user_turn(item: dict[str, Any]) -> bool:
    if item.get("type") != "message" or item.get("role") != "user":
        return False
    text = result_text(item.get("content")).lstrip()
    return not text.startswith(_INJECTED)


def _session_id(records: list[Any]) -> str | None:
    for record in records:
        if isinstance(record, dict) and record.get("type") == "session_meta":
            payload = record.get("payload")
            if isinstance(payload, dict) and isinstance(payload.get("id"), str):
                return str(payload["id"])
    return None


class CodexWriter(Writer):
    agent = "codex"
    resumable = True
    supports_restore = True

    def context_items(self) -> list[dict[str, Any]]:
        """The response items Codex would send on resume, in order."""
        items: list[dict[str, Any]] = []
        for record in self.records():
            if not isinstance(record, dict):
                continue
            payload = record.get("payload")
            if record.get("type") == "compacted" and isinstance(payload, dict):
                history = payload.get("replacement_history")
                items = (
                    [i for i in history if isinstance(i, dict)] if isinstance(history, list) else []
                )
            elif record.get("type") == "response_item" and isinstance(payload, dict):
                items.append(payload)
        return items

    def scan(self) -> Scan:
        found = ScanBuilder()
        for item in self.context_items():
            kind = item.get("type")
            if _user_turn(item):
                found.new_turn()
            elif kind in _CALLS:
                value = item.get("arguments", item.get("input", item.get("action")))
                found.call(str(item.get("call_id")), str(item.get("name") or kind), value)
            elif kind in _OUTPUTS:
                use = found.use(str(item.get("call_id")))
                if use is not None:
                    output = item.get("output")
                    if isinstance(output, dict):
                        output = output.get("content", output)
                    use.result = result_text(output)
        return found.scan()

    def render(self, results: dict[str, str], inputs: dict[str, Any], session_id: str) -> bytes:
        return jsonl_bytes(self.forked(results, inputs, session_id))

    def forked(self, results: dict[str, str], inputs: dict[str, Any], session_id: str) -> list[Any]:
        """The fork's records: copies of the session's, under ``session_id``, with ``results``
        and ``inputs`` replaced by call id."""
        records = self.records()
        old_id = _session_id(records)

        def replace(value: dict[str, Any]) -> None:
            call_id = text_id(value.get("call_id"))
            if value.get("type") in _OUTPUTS and call_id in results:
                value["output"] = results[str(call_id)]
            elif value.get("type") in _CALLS and call_id in inputs:
                key = "arguments" if "arguments" in value else "input"
                value[key] = dumps(inputs[str(call_id)])

        return renamed_and_replaced(records, old_id, session_id, replace)

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

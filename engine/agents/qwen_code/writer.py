"""Qwen Code: a fork is a new recording ``<new id>.jsonl`` beside the source in the project's
``chats/``, every record kept with the new id as its ``sessionId``; Qwen resumes it by id:
``qwen --resume <id>``.

What Qwen sends on resume is the ``message`` of each record on the path from the last record
back to the root, the last ``chat_compression`` on it replacing the history before it with its
``compressedHistory`` (``SessionApiHistoryAccumulator``): only those tool uses are scanned. A
result is a ``functionResponse`` part (its ``response`` becomes ``{"output": text}``), an input a
``functionCall`` part's ``args``; both are replaced wherever they appear.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ctxtop.engine.agents.gemini_cli.reader import response_text
from ctxtop.engine.agents.qwen_code.reader import SNAPSHOT_TAG
from ctxtop.engine.compaction.handoff import OPENING
from ctxtop.engine.editing.turns import Scan, ScanBuilder
from ctxtop.engine.editing.writer import (
    Writer,
    encoded,
    jsonl_bytes,
    jsonl_records,
    list_of,
    renamed_and_replaced,
    text_id,
)
from ctxtop.engine.sessions.fork_mark import COMPACTION_KEY, CTXTOP_TRIGGER

_OFF_CHAIN = "custom_title"  # written beside the chain, not on it
_UNSENT = "realtime_message"
COMPRESSION = "chat_compression"


def chain(records: list[Any]) -> list[dict[str, Any]]:
    """The records on the path from the last one back to the root, in order."""
    linked = [
        r
        for r in records
        if isinstance(r, dict) and isinstance(r.get("uuid"), str) and r.get("subtype") != _OFF_CHAIN
    ]
    by_id = {record["uuid"]: record for record in linked}
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    at = linked[-1] if linked else None
    while at is not None and at["uuid"] not in seen:
        seen.add(at["uuid"])
        path.append(at)
        parent = at.get("parentUuid")
        at = by_id.get(parent) if isinstance(parent, str) else None
    path.reverse()
    return path


def history(records: list[Any]) -> list[dict[str, Any]]:
    """The ``Content`` list Qwen rebuilds on resume, in order."""
    contents: list[dict[str, Any]] = []
    for record in chain(records):
        payload = record.get("systemPayload")
        if record.get("subtype") == COMPRESSION and isinstance(payload, dict):
            compressed = payload.get("compressedHistory")
            if isinstance(compressed, list):
                contents = [c for c in compressed if isinstance(c, dict)]
        elif isinstance(record.get("message"), dict) and record.get("subtype") != _UNSENT:
            contents.append(record["message"])
    return contents


def _opens_with(content: Any, role: str, openings: tuple[str, ...]) -> bool:
    """Whether ``content`` is a ``role`` turn whose first part is text beginning so."""
    if not isinstance(content, dict) or content.get("role") != role:
        return False
    parts = list_of(content.get("parts"))
    first = parts[0].get("text") if parts and isinstance(parts[0], dict) else None
    return isinstance(first, str) and first.lstrip().startswith(openings)


class QwenCodeWriter(Writer):
    agent = "qwen-code"
    resumable = True
    supports_restore = True

    def scan(self) -> Scan:
        found = ScanBuilder()
        for content in history(self.records()):
            parts = [part for part in list_of(content.get("parts")) if isinstance(part, dict)]
            if content.get("role") == "user" and any("text" in part for part in parts):
                found.new_turn()
            for part in parts:
                call, result = part.get("functionCall"), part.get("functionResponse")
                if isinstance(call, dict) and text_id(call.get("id")):
                    found.call(
                        str(call["id"]), str(call.get("name") or "unknown"), call.get("args")
                    )
                elif isinstance(result, dict):
                    use = found.use(str(result.get("id")))
                    if use is not None:
                        use.result = response_text(result.get("response"))
        return found.scan()

    def render(self, results: dict[str, str], inputs: dict[str, Any], session_id: str) -> bytes:
        return jsonl_bytes(self.forked(results, inputs, session_id))

    def forked(self, results: dict[str, str], inputs: dict[str, Any], session_id: str) -> list[Any]:
        """The fork's records: copies of the session's, under ``session_id``, with ``results``
        and ``inputs`` replaced by call id."""
        records = self.records()
        first = next((r for r in records if isinstance(r, dict)), {})
        old_id = text_id(first.get("sessionId"))

        def replace(value: dict[str, Any]) -> None:
            call, result = value.get("functionCall"), value.get("functionResponse")
            if isinstance(result, dict) and text_id(result.get("id")) in results:
                value["functionResponse"] = {
                    **result,
                    "response": {"output": results[result["id"]]},
                }
            elif isinstance(call, dict) and text_id(call.get("id")) in inputs:
                value["functionCall"] = {**call, "args": inputs[call["id"]]}

        return renamed_and_replaced(records, old_id, session_id, replace)

    def mark(
        self,
        fork: bytes,
        context_tokens: int,
        session_id: str,
        usage: Mapping[str, tuple[int, int]] | None = None,
    ) -> bytes:
        """Also the ``newTokenCount`` of a compression ctxtop wrote (the fork's last record):
        the prompt Qwen counts from on resume is ctxtop's estimate of the fork's context."""
        body = fork.rstrip(b"\n")
        start = body.rfind(b"\n") + 1
        try:
            record = json.loads(body[start:].decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            record = None
        ours = isinstance(record, dict) and record.get(COMPACTION_KEY) == CTXTOP_TRIGGER
        payload = record.get("systemPayload") if ours and isinstance(record, dict) else None
        if isinstance(payload, dict) and isinstance(payload.get("info"), dict):
            payload["info"]["newTokenCount"] = context_tokens
            fork = body[:start] + encoded(record) + fork[len(body) :]
        return super().mark(fork, context_tokens, session_id)

    def with_message(self, fork: bytes, line: int, text: str) -> bytes:
        """The message goes into the ``compressedHistory`` of the compression at ``line``,
        right after its summary (and the model's turn answering it): what Qwen sends on
        resume. (A record after the compression could fall between a kept tool call and its
        result.)"""
        records = jsonl_records(self.path, fork)
        record = records[line - 1]
        payload = record.get("systemPayload") if isinstance(record, dict) else None
        compressed = payload.get("compressedHistory") if isinstance(payload, dict) else None
        if not isinstance(compressed, list) or record.get("subtype") != COMPRESSION:
            raise ValueError(f"line {line} is no compression")
        summaries = (SNAPSHOT_TAG, OPENING)
        at = next((i for i, c in enumerate(compressed) if _opens_with(c, "user", summaries)), None)
        if at is None:
            raise ValueError(f"the compression at line {line} has no summary")
        answer = compressed[at + 1] if at + 1 < len(compressed) else None
        parts = list_of(answer.get("parts")) if isinstance(answer, dict) else []
        if _opens_with(answer, "model", ("",)) and not any("functionCall" in p for p in parts):
            at += 1
        compressed.insert(at + 1, {"role": "user", "parts": [{"text": text}]})
        return jsonl_bytes(records)

    def fork_name(self, session_id: str) -> str:
        return f"{session_id}.jsonl"

    def resume_command(self, session_id: str, cwd: str | None) -> str | None:
        return f"qwen --resume {session_id}"

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

from ctxtop.engine.agents.qwen_code.entries import (
    COMPRESSION,
    SNAPSHOT_TAG,
    TITLE,
    Content,
    QwenEntry,
    entry,
)
from ctxtop.engine.compaction.handoff import OPENING
from ctxtop.engine.editing.turns import Scan, ScanBuilder
from ctxtop.engine.editing.writer import (
    Writer,
    encoded,
    jsonl_bytes,
    jsonl_records,
    renamed_and_replaced,
    text_id,
)


def chain(entries: list[Any]) -> list[QwenEntry]:
    """The records on the path from the last one back to the root, in order."""
    linked = [
        e for e in entries if type(e) is QwenEntry and e.uuid is not None and e.subtype != TITLE
    ]
    by_id = {e.uuid: e for e in linked}
    path: list[QwenEntry] = []
    seen: set[str] = set()
    at = linked[-1] if linked else None
    while at is not None and at.uuid is not None and at.uuid not in seen:
        seen.add(at.uuid)
        path.append(at)
        at = by_id.get(at.parent) if at.parent is not None else None
    path.reverse()
    return path


def history(entries: list[Any]) -> list[Content]:
    """The ``Content`` list Qwen rebuilds on resume, in order."""
    contents: list[Content] = []
    for found in chain(entries):
        if found.subtype == COMPRESSION and found.has_payload:
            if found.compressed is not None:
                contents = list(found.compressed)
        elif found.sent is not None:
            contents.append(found.sent)
    return contents


class QwenCodeWriter(Writer):
    agent = "qwen-code"
    resumable = True
    supports_restore = True
    entry_of = staticmethod(entry)

    def scan(self) -> Scan:
        found = ScanBuilder()
        for content in history(self.entries()):
            if content.starts_turn:
                found.new_turn()
            for part in content.objects:
                call, result = part.call, part.result
                if call is not None and call.text_id:
                    found.call(call.id, call.name, call.args)
                elif result is not None:
                    use = found.use(result.id)
                    if use is not None:
                        use.result = result.text
        return found.scan()

    def render(self, results: dict[str, str], inputs: dict[str, Any], session_id: str) -> bytes:
        return jsonl_bytes(self.forked(results, inputs, session_id))

    def forked(self, results: dict[str, str], inputs: dict[str, Any], session_id: str) -> list[Any]:
        """The fork's records: copies of the session's, under ``session_id``, with ``results``
        and ``inputs`` replaced by call id."""
        entries = self.entries()
        first = next((e for e in entries if type(e) is QwenEntry and e.kind != "bad_shape"), None)
        old_id = first.session_id if first is not None else None
        records = [e.record if type(e) is QwenEntry else e for e in entries]

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
        written = entry(record, 0).compression
        if written is not None and written.ours:
            record["systemPayload"]["info"]["newTokenCount"] = context_tokens
            fork = body[:start] + encoded(record) + fork[len(body) :]
        return super().mark(fork, context_tokens, session_id)

    def with_message(self, fork: bytes, line: int, text: str) -> bytes:
        """The message goes into the ``compressedHistory`` of the compression at ``line``,
        right after its summary (and the model's turn answering it): what Qwen sends on
        resume. (A record after the compression could fall between a kept tool call and its
        result.)"""
        records = jsonl_records(self.path, fork)
        found = entry(records[line - 1], line)
        if found.compressed is None:
            raise ValueError(f"line {line} is no compression")
        summaries = (SNAPSHOT_TAG, OPENING)
        summary = next((c for c in found.compressed if c.opens_with("user", summaries)), None)
        if summary is None:
            raise ValueError(f"the compression at line {line} has no summary")
        at = summary.at
        answer = next((c for c in found.compressed if c.at == at + 1), None)
        if (
            answer is not None
            and answer.opens_with("model", ("",))
            and not any(part.names_call for part in answer.parts)
        ):
            at += 1
        found.record["systemPayload"]["compressedHistory"].insert(
            at + 1, {"role": "user", "parts": [{"text": text}]}
        )
        return jsonl_bytes(records)

    def fork_name(self, session_id: str) -> str:
        return f"{session_id}.jsonl"

    def resume_command(self, session_id: str, cwd: str | None) -> str | None:
        return f"qwen --resume {session_id}"

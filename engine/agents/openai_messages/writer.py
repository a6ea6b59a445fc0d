"""The generic format (OpenAI chat messages): a new JSON file next to the session.

The fork is one JSON document of the same shape as the source (a list of messages, or an object
with ``messages``); a JSONL source becomes a JSON list. Its name carries the new id.

ctxtop's marks (engine/sessions/fork_mark.py) stay out of the keys a chat API reads from a
message: the usage of a kept response that ctxtop's rewrite precedes becomes ctxtop's estimate,
marked inside that ``usage`` (a key the log itself puts there); the fork's context estimate goes
on the object holding the messages, or, in a bare list, into the last response's ``usage``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxtop.engine.agents.openai_messages.entries import Entry, ToolCall, entry
from ctxtop.engine.agents.openai_messages.reader import message_id_of
from ctxtop.engine.editing.turns import Scan, ScanBuilder, result_text
from ctxtop.engine.editing.writer import Writer, dumps, encoded, jsonl_records
from ctxtop.engine.sessions.fork_mark import ESTIMATED, USAGE_KEY, fork_marker, marked


class OpenAIMessagesWriter(Writer):
    agent = "openai-messages"
    # (mypy takes a callable class variable for a method: this one is static)
    entry_of = staticmethod(entry)

    _document: tuple[Any, list[Entry]] | None = None

    def document(self) -> tuple[Any, list[Entry]]:
        """(container, messages) of the session: the container is the object holding
        ``messages`` as written, or None; the messages are entries. Made once and only read
        after (``render`` copies what it changes)."""
        if self._document is None:
            self._document = self._session_document()
        return self._document

    def _session_document(self) -> tuple[Any, list[Entry]]:
        """From the session's lines made entries, if they were decoded: a line that is one value
        is the document; lines that are each a value are no document (nothing decoded again)."""
        records = self._records
        if records and not any(isinstance(r, bytes) for r in records):
            entries = self.entries()
            if len(entries) == 1:
                return _held(entries[0])
            return None, [e for e in entries if e.is_object]
        document = _decoded(self.data)
        if document is not _NOT_JSON:
            return _held(entry(document, 1))
        if records == []:
            jsonl_records(self.path, self.data)  # (its error: an empty session)
        return None, [e for e in self.entries() if isinstance(e, Entry) and e.is_object]

    def scan(self) -> Scan:
        found = ScanBuilder()
        for message in self.document()[1]:
            role = message.role
            if role == "user":
                found.new_turn()
            elif role == "assistant":
                for call in message.calls or ():
                    found.call(call.written_id, call.function_name, call.input)
            elif role == "tool":
                use = found.use(message.written_answers)
                if use is not None:
                    use.result = result_text(message.content)
        return found.scan()

    def render(self, results: dict[str, str], inputs: dict[str, Any], session_id: str) -> bytes:
        container, messages = self.document()
        forked = [_forked(message, results, inputs) for message in messages]
        if container is not None:
            container = {**container, "messages": forked}
        return _dumps(container, forked)

    def mark(
        self,
        fork: bytes,
        context_tokens: int,
        session_id: str,
        usage: Mapping[str, tuple[int, int]] | None = None,
    ) -> bytes:
        """The usage of each kept response from the first message ctxtop changed on is
        ``usage``'s (prompt, output) for it, marked ctxtop's; the fork's ``context_tokens`` on
        the container, else in the last response's usage (the fork through it: what the
        messages after it add is counted again by the reader)."""
        container, messages = _fork_document(self.path, fork)
        parent = self.document()[1]
        estimates = usage or {}
        changed = False
        last: tuple[dict[str, Any], str] | None = None  # the last response
        index = 0
        for position, message in enumerate(messages):
            found = entry(message, position + 1)
            if found.kind != "message":
                continue
            changed = changed or position >= len(parent) or parent[position].record != message
            key = message_id_of(found.own_id, index)
            index += 1
            if found.role != "assistant":
                continue
            last = (message, key)
            if changed and key in estimates and found.usage is not None:
                message["usage"] = _estimated_usage(message["usage"], *estimates[key])
        if container is not None:
            container = marked(container, context_tokens, session_id)
        elif last is not None and last[1] in estimates:
            message, key = last
            prompt, output = estimates[key]
            # undo asks for the mark: a response without usage gets ctxtop's, in a log that
            # puts usage on its messages (a log without any has no place for a mark)
            if not isinstance(message.get("usage"), dict) and any(m.logs_usage for m in parent):
                message["usage"] = _estimated_usage({}, prompt, output)
            if isinstance(message.get("usage"), dict):
                message["usage"].update(fork_marker(prompt + output, session_id))
        return _dumps(container, messages)

    def fork_name(self, session_id: str) -> str:
        stem = re.sub(r"[^A-Za-z0-9_-]+", "-", self.path.stem).strip("-")[:80] or "session"
        return f"{stem}.ctxtop-{session_id}.json"


_NOT_JSON = object()


def _decoded(data: bytes) -> Any:
    """``data`` as one JSON document, or ``_NOT_JSON``."""
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return _NOT_JSON


def _held(held: Entry) -> tuple[Any, list[Entry]]:
    """(container, messages) of a document that is the one value ``held``."""
    if held.holds_messages and held.messages is not None:
        return held.record, list(held.messages)
    if isinstance(held.record, list):
        return None, [entry(message, line) for line, message in enumerate(held.record, 1)]
    return None, [held]


def _fork_document(path: Path, fork: bytes) -> tuple[Any, list[Any]]:
    """(container, messages) of a fork ctxtop rendered, decoded to be marked: the values
    themselves, changed in place."""
    document = _decoded(fork)
    if document is _NOT_JSON:
        document = [r for r in jsonl_records(path, fork) if isinstance(r, dict)]
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        return document, document["messages"]
    return None, document if isinstance(document, list) else [document]


def _forked(message: Entry, results: dict[str, str], inputs: dict[str, Any]) -> Any:
    """The fork's copy of a message with its new result or call inputs, or the message as
    written (the session's messages are shared, never changed)."""
    record = message.record
    if message.role == "tool" and message.text_answers in results:
        record = {**record, "content": results[str(message.text_answers)]}
    if message.role == "assistant":
        new = {
            id(call.record): _forked_call(call, inputs[call.text_id])
            for call in message.calls or ()
            if call.text_id in inputs
        }
        if new:
            calls = [new.get(id(call), call) for call in record["tool_calls"]]
            record = {**record, "tool_calls": calls}
    return record


def _forked_call(call: ToolCall, value: Any) -> dict[str, Any]:
    function = call.record.get("function", {})
    return {**call.record, "function": {**function, "arguments": dumps(value)}}


def _dumps(container: Any, messages: list[Any]) -> bytes:
    document = container if container is not None else messages
    return encoded(document, indent=1) + b"\n"


def _estimated_usage(raw: Mapping[str, Any], prompt: int, output: int) -> dict[str, Any]:
    """ctxtop's (prompt, output) in the shape of the log's usage ``raw`` (Chat Completions or
    Responses), marked as ctxtop's: no request made, and no cache figure claimed."""
    names = ("input_tokens", "output_tokens") if "input_tokens" in raw else None
    prompt_name, output_name = names or ("prompt_tokens", "completion_tokens")
    return {
        prompt_name: prompt,
        output_name: output,
        "total_tokens": prompt + output,
        USAGE_KEY: ESTIMATED,
    }

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
from typing import Any

from ctxtop.engine.agents.openai_messages.reader import is_message, is_request_usage, message_id_of
from ctxtop.engine.editing.turns import Scan, ScanBuilder, result_text
from ctxtop.engine.editing.writer import Writer, dumps, encoded, jsonl_records, list_of, text_id
from ctxtop.engine.sessions.fork_mark import ESTIMATED, USAGE_KEY, fork_marker, marked


class OpenAIMessagesWriter(Writer):
    agent = "openai-messages"

    _document: tuple[Any, list[Any]] | None = None

    def document(self, data: bytes | None = None) -> tuple[Any, list[Any]]:
        """(container, messages) of the session (or of ``data``): the container is the object
        holding ``messages``, or None. The session's is decoded once and only read after
        (``render`` copies what it changes)."""
        if data is None:
            if self._document is None:
                self._document = self._decoded(self.data, self._records)
            return self._document
        return self._decoded(data)

    def _decoded(self, data: bytes, records: list[Any] | None = None) -> tuple[Any, list[Any]]:
        """``records``: ``data``'s lines decoded already, if they were: a line that is one value
        is the document; lines that are each a value are no document (nothing decoded again)."""
        if records and not any(isinstance(r, bytes) for r in records):
            document = (
                records[0] if len(records) == 1 else [r for r in records if isinstance(r, dict)]
            )
        else:
            try:
                document = json.loads(data.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                lines = records or jsonl_records(self.path, data)
                document = [r for r in lines if isinstance(r, dict)]
        if isinstance(document, dict) and isinstance(document.get("messages"), list):
            return document, document["messages"]
        if isinstance(document, list):
            return None, document
        return None, [document]

    def scan(self) -> Scan:
        found = ScanBuilder()
        for message in self.document()[1]:
            if not isinstance(message, dict):
                continue
            role = message.get("role")
            if role == "user":
                found.new_turn()
            elif role == "assistant":
                for call in list_of(message.get("tool_calls")):
                    if not isinstance(call, dict):
                        continue
                    function = call.get("function")
                    if not isinstance(function, dict):
                        function = {}
                    name, value = str(function.get("name")), function.get("arguments")
                    found.call(str(call.get("id")), name, value)
            elif role == "tool":
                use = found.use(str(message.get("tool_call_id")))
                if use is not None:
                    use.result = result_text(message.get("content"))
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
        container, messages = self.document(fork)
        parent = self.document()[1]
        estimates = usage or {}
        changed = False
        last: tuple[dict[str, Any], str] | None = None  # the last response
        index = 0
        for position, message in enumerate(messages):
            if not is_message(message):
                continue
            changed = changed or position >= len(parent) or parent[position] != message
            key = message_id_of(message, index)
            index += 1
            if message.get("role") != "assistant":
                continue
            last = (message, key)
            if changed and key in estimates and is_request_usage(message.get("usage")):
                message["usage"] = _estimated_usage(message["usage"], *estimates[key])
        if container is not None:
            container = marked(container, context_tokens, session_id)
        elif last is not None and last[1] in estimates:
            message, key = last
            prompt, output = estimates[key]
            # undo asks for the mark: a response without usage gets ctxtop's, in a log that
            # puts usage on its messages (a log without any has no place for a mark)
            if not isinstance(message.get("usage"), dict) and _uses_usage(parent):
                message["usage"] = _estimated_usage({}, prompt, output)
            if isinstance(message.get("usage"), dict):
                message["usage"].update(fork_marker(prompt + output, session_id))
        return _dumps(container, messages)

    def fork_name(self, session_id: str) -> str:
        stem = re.sub(r"[^A-Za-z0-9_-]+", "-", self.path.stem).strip("-")[:80] or "session"
        return f"{stem}.ctxtop-{session_id}.json"


def _forked(message: Any, results: dict[str, str], inputs: dict[str, Any]) -> Any:
    """The fork's copy of a message with its new result or call inputs, or ``message`` itself
    (the session's messages are shared, never changed)."""
    if not isinstance(message, dict):
        return message
    if message.get("role") == "tool" and text_id(message.get("tool_call_id")) in results:
        message = {**message, "content": results[str(message["tool_call_id"])]}
    if message.get("role") == "assistant":
        calls = list_of(message.get("tool_calls"))
        forked = [_forked_call(call, inputs) for call in calls]
        if any(new is not old for new, old in zip(forked, calls, strict=True)):
            message = {**message, "tool_calls": forked}
    return message


def _forked_call(call: Any, inputs: dict[str, Any]) -> Any:
    if not isinstance(call, dict) or text_id(call.get("id")) not in inputs:
        return call
    function = call.get("function", {})
    return {**call, "function": {**function, "arguments": dumps(inputs[str(call["id"])])}}


def _uses_usage(messages: list[Any]) -> bool:
    return any(isinstance(message, Mapping) and "usage" in message for message in messages)


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

"""The generic format (OpenAI chat messages): a new JSON file next to the session.

The fork is one JSON document of the same shape as the source (a list of messages, or an object
with ``messages``); a JSONL source becomes a JSON list. Its name carries the new id.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from engine.editing.cycles import Scan, ToolUse, result_text
from engine.editing.writer import Writer, dumps, jsonl_records, list_of, text_id


class OpenAIMessagesWriter(Writer):
    agent = "openai-messages"

    def document(self) -> tuple[Any, list[Any]]:
        """(container, messages): the container is the object holding ``messages``, or None."""
        try:
            document = json.loads(self.data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            document = [r for r in jsonl_records(self.path, self.data) if isinstance(r, dict)]
        if isinstance(document, dict) and isinstance(document.get("messages"), list):
            return document, document["messages"]
        if isinstance(document, list):
            return None, document
        return None, [document]

    def scan(self) -> Scan:
        uses: dict[str, ToolUse] = {}
        cycle = 0
        for message in self.document()[1]:
            if not isinstance(message, dict):
                continue
            role = message.get("role")
            if role == "user":
                cycle += 1
            elif role == "assistant":
                for call in list_of(message.get("tool_calls")):
                    if not isinstance(call, dict):
                        continue
                    function = call.get("function")
                    if not isinstance(function, dict):
                        function = {}
                    call_id = str(call.get("id"))
                    if call_id not in uses:
                        uses[call_id] = ToolUse(
                            call_id,
                            str(function.get("name")),
                            function.get("arguments"),
                            None,
                            cycle,
                            len(uses),
                        )
            elif role == "tool":
                use = uses.get(str(message.get("tool_call_id")))
                if use is not None:
                    use.result = result_text(message.get("content"))
        return Scan(list(uses.values()), cycle)

    def render(self, results: dict[str, str], inputs: dict[str, Any], session_id: str) -> bytes:
        container, messages = self.document()
        for message in messages:
            if not isinstance(message, dict):
                continue
            if message.get("role") == "tool" and text_id(message.get("tool_call_id")) in results:
                message["content"] = results[str(message["tool_call_id"])]
            for call in (
                list_of(message.get("tool_calls")) if message.get("role") == "assistant" else []
            ):
                if isinstance(call, dict) and text_id(call.get("id")) in inputs:
                    function = call.setdefault("function", {})
                    function["arguments"] = dumps(inputs[str(call["id"])])
        document = container if container is not None else messages
        return (json.dumps(document, ensure_ascii=False, indent=1) + "\n").encode("utf-8")

    def mark(
        self,
        fork: bytes,
        context_tokens: int,
        usage: Mapping[str, tuple[int, int]] | None = None,
    ) -> bytes:
        """No mark: the messages may go to an API as they are, and a chat API may refuse a
        key it does not know."""
        return fork

    def fork_name(self, session_id: str) -> str:
        stem = re.sub(r"[^A-Za-z0-9_-]+", "-", self.path.stem).strip("-")[:80] or "session"
        return f"{stem}.ctxtop-{session_id}.json"

"""The generic format: a JSON array or JSONL of OpenAI chat messages, optional ``usage`` each.

Each element is one chat message: ``role``, ``content`` (a string or a list of parts),
``tool_calls`` (``[{id, function: {name, arguments}}]``) on assistant messages and
``tool_call_id`` on ``tool`` messages. An assistant message may carry ``usage`` in the Chat
Completions shape (``prompt_tokens``, ``completion_tokens``,
``prompt_tokens_details.cached_tokens``, ``completion_tokens_details.reasoning_tokens``) or the
Responses shape (``input_tokens``, ``output_tokens``, ``input_tokens_details.cached_tokens``).
A top-level object ``{"model": …, "messages": […]}`` is read too.

A fork ctxtop wrote (engine/agents/openai_messages/writer.py) carries its marks where a chat API
does not look: a usage ctxtop wrote holds ``ctxtopUsage`` (no request), the fork's context
estimate is ``ctxtopFork`` on the object holding the messages or in the last response's usage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from ctxtop.engine.agents.openai_messages.entries import ROLES, Entry, entry
from ctxtop.engine.sessions.adapter import GENERIC, NOT_MINE, Adapter
from ctxtop.engine.sessions.model import Block, ForkEstimate, Message, Role


def is_message(record: Any) -> bool:
    """A chat message: an object whose role is one of ``ROLES`` (a role that is a list or an
    object is none, not an error)."""
    if not isinstance(record, Mapping):
        return False
    role = record.get("role")
    return isinstance(role, str) and role in ROLES


def message_id_of(own_id: str | None, index: int) -> str:
    """The id of the ``index``-th chat message (counted from 0): its own, else by position."""
    return own_id or f"m{index + 1}"


class OpenAIMessagesAdapter(Adapter):
    agent = "openai-messages"
    label = "OpenAI messages"
    # (mypy takes a callable class variable for a method: this one is static)
    entry = staticmethod(entry)

    @classmethod
    def detect(cls, head: Sequence[Any]) -> int:
        records = [r for r in head if isinstance(r, Mapping)]
        if len(records) == 1 and isinstance(records[0].get("messages"), list):
            records = [r for r in records[0]["messages"][:20] if isinstance(r, Mapping)]
        if records and all(is_message(r) for r in records):
            return GENERIC
        return NOT_MINE

    def feed(self, record: Any, line: int) -> None:
        self.feed_entry(entry(record, line), line)

    def feed_entry(self, entry: Entry, line: int) -> None:
        kind = entry.kind
        if kind == "message":
            self._message(entry, line)
        elif kind == "envelope":
            self._envelope(entry, line)
        else:
            self._not_message(entry, line)

    def _not_message(self, entry: Entry, line: int) -> None:
        self.state.skip(line, "not a chat message (no known role)")
        self.state.unknown_type(entry.unknown_type)

    def _envelope(self, entry: Entry, line: int) -> None:
        if entry.model is not None:
            self.state.model = entry.model
        if entry.messages is None:
            raise TypeError("messages that are no list")  # (the line: an unexpected record shape)
        for message in entry.messages:
            if message.kind == "message":
                self._message(message, line)
            else:
                self._not_message(message, line)

    def _message(self, entry: Entry, line: int) -> None:
        state = self.state
        role = cast(Role, entry.role)
        index = len(state.context)
        message_id = message_id_of(entry.own_id, index)
        blocks = [Block(part.kind, part.text, None, None, False, part.raw) for part in entry.parts]
        timestamp = entry.timestamp
        state.touch(timestamp)
        if role == "tool":
            call_id = entry.answers
            text = "\n".join(block.text for block in blocks)
            blocks = [Block("tool_result", text, call_id or None)]
            if call_id:
                state.record_tool_result(call_id, text)
        if entry.calls is None:
            raise TypeError("tool calls that are no list")  # (the line: an unexpected record shape)
        for call in entry.calls:
            call_id = call.own_id or f"{message_id}.{len(blocks)}"
            blocks.append(Block("tool_use", call.arguments, call_id, call.name))
            state.record_tool_call(call_id, call.name, line=line, input_text=call.arguments)
        message = Message(message_id, role, blocks, line, timestamp)
        if entry.model is not None:
            state.model = entry.model
        state.context.append(message)
        if entry.usage is not None:
            key = entry.own_id or f"line{line}.{index}"
            message.response_key = key
            state.record_response(
                key, entry.usage, model=entry.model, line=line, timestamp=timestamp
            )
        if entry.fork_tokens is not None:  # a fork ctxtop wrote: its context through this message
            state.fork_estimate = ForkEstimate(entry.fork_tokens, line)

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

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from ctxtop.engine.sessions.adapter import GENERIC, NOT_MINE, Adapter, logs_tokens, token_count
from ctxtop.engine.sessions.fork_mark import marked_tokens, usage_is_ctxtops
from ctxtop.engine.sessions.model import Block, ForkEstimate, Message, Role, Usage

_ROLES = {"system", "developer", "user", "assistant", "tool"}


def is_message(record: Any) -> bool:
    """A chat message: an object whose role is one of ``_ROLES`` (a role that is a list or an
    object is none, not an error)."""
    if not isinstance(record, Mapping):
        return False
    role = record.get("role")
    return isinstance(role, str) and role in _ROLES


def message_id_of(record: Mapping[str, Any], index: int) -> str:
    """The id of the ``index``-th chat message (counted from 0): its own, else by position."""
    return str(record.get("id") or f"m{index + 1}")


def is_request_usage(usage: Any) -> bool:
    """Whether ``usage`` holds an API request's figures (not none, not ctxtop's estimate)."""
    return logs_tokens(usage, TOKEN_KEYS) and not usage_is_ctxtops(usage)


def _int(raw: Mapping[str, Any], *names: str) -> int:
    for name in names:
        value = token_count(raw.get(name))
        if value is not None:
            return value
    return 0


def _detail(raw: Mapping[str, Any], group: str, name: str) -> int:
    details = raw.get(group)
    return _int(details, name) if isinstance(details, Mapping) else 0


# The token counts of Chat Completions and Responses usage (one of them: a request).
TOKEN_KEYS = ("prompt_tokens", "input_tokens", "completion_tokens", "output_tokens")


def usage_from(raw: Mapping[str, Any]) -> Usage:
    """OpenAI usage → ``Usage``: the prompt count includes cached tokens, so they are split off."""
    prompt = _int(raw, "prompt_tokens", "input_tokens")
    cached = _detail(raw, "prompt_tokens_details", "cached_tokens") or _detail(
        raw, "input_tokens_details", "cached_tokens"
    )
    output = _int(raw, "completion_tokens", "output_tokens")
    reasoning = _detail(raw, "completion_tokens_details", "reasoning_tokens") or _detail(
        raw, "output_tokens_details", "reasoning_tokens"
    )
    return Usage(
        input_tokens=max(prompt - cached, 0),
        output_tokens=output,
        cache_read_tokens=cached,
        reasoning_tokens=reasoning,
    )


def _kind_of(record: Any) -> Any:
    """What to call a record that is no chat message: its role, else its type."""
    if not isinstance(record, Mapping):
        return None
    role = record.get("role")
    return f"role:{role}" if isinstance(role, str) else record.get("type")


def _content_blocks(content: Any, kind: str = "text") -> list[Block]:
    if content is None:
        return []
    if isinstance(content, str):
        return [Block("text", content)] if content else []
    blocks: list[Block] = []
    if isinstance(content, list):
        for part in content:
            if isinstance(part, str):
                blocks.append(Block("text", part))
            elif isinstance(part, Mapping):
                if isinstance(part.get("text"), str):
                    blocks.append(Block("text", part["text"]))
                elif part.get("type") in ("image_url", "input_image", "image"):
                    blocks.append(Block("image"))
                else:
                    blocks.append(Block("other", raw=part))
        return blocks
    return [Block("other", raw=content)]


class OpenAIMessagesAdapter(Adapter):
    agent = "openai-messages"
    label = "OpenAI messages"

    @classmethod
    def detect(cls, head: Sequence[Any]) -> int:
        records = [r for r in head if isinstance(r, Mapping)]
        if len(records) == 1 and isinstance(records[0].get("messages"), list):
            records = [r for r in records[0]["messages"][:20] if isinstance(r, Mapping)]
        if records and all(is_message(r) for r in records):
            return GENERIC
        return NOT_MINE

    def feed(self, record: Any, line: int) -> None:
        if isinstance(record, Mapping) and "role" not in record and "messages" in record:
            self._envelope(record, line)
            return
        if not is_message(record):
            self.state.skip(line, "not a chat message (no known role)")
            self.state.unknown_type(_kind_of(record))
            return
        self._message(record, line)

    def _envelope(self, record: Mapping[str, Any], line: int) -> None:
        if isinstance(record.get("model"), str):
            self.state.model = record["model"]
        for message in record["messages"]:
            if is_message(message):
                self._message(message, line)
            else:
                self.state.skip(line, "not a chat message (no known role)")
                self.state.unknown_type(_kind_of(message))

    def _message(self, record: Mapping[str, Any], line: int) -> None:
        state = self.state
        role = cast(Role, record["role"])
        index = len(state.context)
        message_id = message_id_of(record, index)
        blocks = _content_blocks(record.get("content"))
        timestamp = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
        state.touch(timestamp)
        if role == "tool":
            call_id = str(record.get("tool_call_id") or "")
            text = "\n".join(block.text for block in blocks)
            blocks = [Block("tool_result", text, call_id or None)]
            if call_id:
                state.record_tool_result(call_id, text)
        for call in record.get("tool_calls") or []:
            if not isinstance(call, Mapping):
                continue
            function = call.get("function")
            function = function if isinstance(function, Mapping) else {}
            name = str(function.get("name") or call.get("name") or "unknown")
            arguments = function.get("arguments", call.get("arguments", ""))
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments, ensure_ascii=False)
            call_id = str(call.get("id") or f"{message_id}.{len(blocks)}")
            blocks.append(Block("tool_use", arguments, call_id, name))
            state.record_tool_call(call_id, name, line=line, input_text=arguments)
        message = Message(message_id, role, blocks, line, timestamp)
        if isinstance(record.get("model"), str):
            state.model = record["model"]
        state.context.append(message)
        usage = record.get("usage")
        if role == "assistant" and is_request_usage(usage):
            assert isinstance(usage, Mapping)
            key = str(record.get("id") or f"line{line}.{index}")
            message.response_key = key
            state.record_response(
                key,
                usage_from(usage),
                model=record.get("model") if isinstance(record.get("model"), str) else None,
                line=line,
                timestamp=timestamp,
            )
        tokens = marked_tokens(usage) if role == "assistant" else None
        if tokens is not None:  # a fork ctxtop wrote: its context through this message
            state.fork_estimate = ForkEstimate(tokens, line)

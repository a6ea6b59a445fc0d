"""OpenAI chat messages' typed record stream: what one decoded line (or one message of a JSON
document) is to ctxtop. The reader (engine/agents/openai_messages/reader.py), the fork writer
and the compaction source read these entries, not the decoded values.

A line is a chat message (``role`` one of ``ROLES``: its content parts, tool calls, the call a
``tool`` message answers, usage, model, timestamp), an object holding ``messages`` (each made an
entry too), another object, or another JSON value. The facts the reader needs on every line are
fields, made once; those only a fork or a compaction asks for are properties, worked out when
asked (a long log is read far more often than it is forked)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal, TypeGuard

import msgspec

from ctxtop.engine.sessions.adapter import MAX_TOKENS, logs_tokens, token_count
from ctxtop.engine.sessions.fork_mark import marked_tokens, usage_is_ctxtops
from ctxtop.engine.sessions.model import BlockKind, Usage

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
IMAGE_PARTS = ("image_url", "input_image", "image")
FILE_PARTS = ("file", "input_file")
# The token counts of Chat Completions and Responses usage (one of them: a request).
TOKEN_KEYS = ("prompt_tokens", "input_tokens", "completion_tokens", "output_tokens")

# message: a chat message (a known role); envelope: an object holding ``messages`` (no role);
# object: another object; value: no object.
Kind = Literal["message", "envelope", "object", "value"]


class Part(msgspec.Struct, frozen=True, gc=False):
    """One part of a message's content, as the dashboard shows it."""

    kind: BlockKind  # text, image or other
    text: str = ""
    raw: Any = None  # the part as written, for one ctxtop does not know


class ToolCall(msgspec.Struct, frozen=True, gc=False):
    """One of an assistant message's ``tool_calls`` (an object)."""

    record: dict[str, Any]  # as written
    own_id: str | None  # its id, when it has one (the reader numbers one without)
    name: str  # the function's name, else the call's, else "unknown"
    arguments: str  # the input as text (JSON text when written as a value)

    @property
    def function(self) -> dict[str, Any]:
        function = self.record.get("function")
        return function if isinstance(function, dict) else {}

    # The fork writer and the compaction source take a call as its ``function`` holds it (and
    # its id as text, "None" when it has none): what they write back goes there.
    @property
    def written_id(self) -> str:
        return str(self.record.get("id"))

    @property
    def text_id(self) -> str | None:
        """The id, when it is text (a fork replaces the input of such a call only)."""
        found = self.record.get("id")
        return found if isinstance(found, str) else None

    @property
    def function_name(self) -> str:
        return str(self.function.get("name"))

    @property
    def input(self) -> Any:
        return self.function.get("arguments")


class Entry(msgspec.Struct, frozen=True, gc=False):
    """One line (or one message of a document) and what it is."""

    record: Any  # the line's value as written
    kind: Kind
    role: str = ""  # an object's role as text ("None" when it has none)
    parts: tuple[Part, ...] = ()
    timestamp: str | None = None
    own_id: str | None = None  # the message's id, when it has one (else it is numbered)
    model: str | None = None
    # The tool calls; None when ``tool_calls`` is a number (the reader skips the message as an
    # unexpected shape, after what it did before reading the calls).
    calls: tuple[ToolCall, ...] | None = ()
    answers: str = ""  # a tool message's call id ("" when it has none)
    usage: Usage | None = None  # an assistant message's request usage (never changed after)
    fork_tokens: int | None = None  # an assistant message's usage: ctxtop's fork mark
    # The entries of ``messages`` (a list, or for an envelope any value the reader iterates);
    # None for an envelope whose ``messages`` is no such value.
    messages: tuple[Entry, ...] | None = None

    @property
    def unknown_type(self) -> str | None:
        """What to call an entry that is no chat message: its role, else its type."""
        if not isinstance(self.record, dict):
            return None
        role = self.record.get("role")
        found = f"role:{role}" if isinstance(role, str) else self.record.get("type")
        return found if isinstance(found, str) else None

    @property
    def is_object(self) -> bool:
        return self.kind != "value"

    @property
    def holds_messages(self) -> bool:
        """An object whose ``messages`` is a list: a JSON document's container (the fork
        writer's rule: a role does not matter there)."""
        return isinstance(self.record, dict) and isinstance(self.record.get("messages"), list)

    @property
    def logs_usage(self) -> bool:
        return isinstance(self.record, dict) and "usage" in self.record

    # A tool message's call id as the fork writer and the compaction source match it ("None"
    # when it has none), and as a fork replaces its result (text only).
    @property
    def written_answers(self) -> str:
        return str(self.record.get("tool_call_id"))

    @property
    def text_answers(self) -> str | None:
        found = self.record.get("tool_call_id")
        return found if isinstance(found, str) else None

    @property
    def content(self) -> Any:
        """The content as written (the edit screen and the compaction take its text by their
        shared rules: editing.turns.result_text, compaction.source.text_of)."""
        return self.record.get("content") if isinstance(self.record, dict) else None

    @property
    def object_parts(self) -> list[dict[str, Any]]:
        content = self.content
        return [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []

    @property
    def images(self) -> int:
        return sum(1 for part in self.object_parts if part.get("type") in IMAGE_PARTS)

    @property
    def files(self) -> list[str]:
        return [file_name(part) for part in self.object_parts if part.get("type") in FILE_PARTS]


def file_name(part: dict[str, Any]) -> str:
    """The name of a file part of a message's content."""
    inner = part.get("file")
    inner = inner if isinstance(inner, dict) else part
    for key in ("filename", "file_name", "name", "file_id"):
        if isinstance(inner.get(key), str):
            return str(inner[key])
    return "(unnamed file)"


def is_request_usage(usage: Any) -> TypeGuard[Mapping[str, Any]]:
    """Whether ``usage`` holds an API request's figures (not none, not ctxtop's estimate)."""
    return logs_tokens(usage, TOKEN_KEYS) and not usage_is_ctxtops(usage)


def _int(raw: Mapping[str, Any], *names: str) -> int:
    for name in names:
        value = raw.get(name)
        if value is None:
            continue
        if type(value) is not int or not 0 <= value <= MAX_TOKENS:  # (most are: no call)
            value = token_count(value)
            if value is None:
                continue
        return value
    return 0


def _detail(raw: Mapping[str, Any], group: str, name: str) -> int:
    details = raw.get(group)
    if details is None:
        return 0
    return _int(details, name) if isinstance(details, Mapping) else 0


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


def _parts(content: Any) -> tuple[Part, ...]:
    if content is None:
        return ()
    if isinstance(content, str):
        return (Part("text", content),) if content else ()
    if not isinstance(content, list):
        return (Part("other", raw=content),)
    parts: list[Part] = []
    for part in content:
        if isinstance(part, str):
            parts.append(Part("text", part))
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str):
                parts.append(Part("text", part["text"]))
            elif part.get("type") in IMAGE_PARTS:
                parts.append(Part("image"))
            else:
                parts.append(Part("other", raw=part))
    return tuple(parts)


def _call(call: dict[str, Any]) -> ToolCall:
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    name = str(function.get("name") or call.get("name") or "unknown")
    arguments = function.get("arguments", call.get("arguments", ""))
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    own = call.get("id")
    return ToolCall(call, str(own) if own else None, name, arguments)


def _calls(raw: Any) -> tuple[ToolCall, ...] | None:
    if not raw:
        return ()
    if isinstance(raw, list):
        return tuple(_call(call) for call in raw if isinstance(call, dict))
    # a string or an object: its characters or keys are no calls; a number: no list at all
    return () if isinstance(raw, str | dict) else None


def _messages(raw: Any, line: int, envelope: bool) -> tuple[Entry, ...] | None:
    if isinstance(raw, list) or (envelope and isinstance(raw, str | dict)):
        return tuple(entry(message, line) for message in raw)
    return None


def entry(record: Any, line: int) -> Entry:
    """What ``record`` (any decoded JSON value, from line ``line``) is to ctxtop."""
    if type(record) is not dict:
        return Entry(record, "value")
    role = record.get("role")
    if type(role) is not str or role not in ROLES:
        envelope = role is None and "role" not in record and "messages" in record
        kind: Kind = "envelope" if envelope else "object"
        model = record.get("model") if envelope else None
        model = model if isinstance(model, str) else None
        messages = _messages(record.get("messages"), line, envelope)
        return Entry(record, kind, str(role), model=model, messages=messages)
    get = record.get
    content = get("content")
    if type(content) is str:  # (most messages: no call)
        parts: tuple[Part, ...] = (Part("text", content),) if content else ()
    else:
        parts = _parts(content)
    timestamp = get("timestamp")
    model = get("model")
    own = get("id")
    calls = get("tool_calls")
    nested = get("messages")
    if role == "assistant":
        usage = get("usage")
        request = usage_from(usage) if is_request_usage(usage) else None
        fork_tokens = marked_tokens(usage)
    else:
        request = fork_tokens = None
    return Entry(
        record,
        "message",
        role,
        parts,
        timestamp if type(timestamp) is str else None,
        str(own) if own else None,
        model if type(model) is str else None,
        _calls(calls) if calls else (),
        str(get("tool_call_id") or "") if role == "tool" else "",
        request,
        fork_tokens,
        None if nested is None else _messages(nested, line, False),
    )

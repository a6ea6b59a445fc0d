"""Codex rollouts as a typed record stream (engine/sessions/entries.py): ``entry`` says what one
decoded line is to ctxtop, for the session reader, the fork writer and the compaction source.

A line is ``{timestamp, [ordinal,] type, payload}`` (agent-log-formats.md §2.2): ``session_meta``,
``turn_context``, ``response_item`` (what is sent to the model, §2.3), ``event_msg``,
``token_usage_record`` (0.169, §2.4), ``compacted`` (§2.5) and ``world_state``. The response
items of a ``compacted`` line's ``replacement_history`` are entries too (``Compacted.history``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import msgspec

from ctxtop.engine.sessions.adapter import MAX_TOKENS, MAX_TOTAL_TOKENS, logs_tokens, token_count
from ctxtop.engine.sessions.fork_mark import ctxtop_compaction_after
from ctxtop.engine.sessions.model import Block, Role, Usage

ROLLOUT_TYPES = {
    "session_meta",
    "turn_context",
    "response_item",
    "event_msg",
    "compacted",
    "world_state",
    "token_usage_record",
}
ROLES: dict[str, Role] = {
    "user": "user",
    "assistant": "assistant",
    "developer": "developer",
    "system": "system",
}
CALLS = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output")
# Any other ``*_call`` item is a tool the API runs itself (``web_search_call``, and the like):
# a call with no output item, named after its type.
SERVER_CALL_SUFFIX = "_call"
# Response items not sent to the model (§2.3).
UNSENT_ITEMS = {"ghost_snapshot"}
# How the context Codex injects as user messages begins (instructions, not the user's words):
# the fork writer's turns, the compaction source's standing items and the proxy's.
INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<permissions")
# The session reader also labels skills instructions so (0.171 logs them as a developer
# message, which every reader takes as instructions anyway).
INSTRUCTIONS = (*INJECTED, "<skills_instructions>")
USAGE_KEYS = (
    "input_tokens",
    "cached_input_tokens",
    "cache_write_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
)
_TOTAL_KEYS = (*USAGE_KEYS, "total_tokens")

# ("unhashable": a type that is a list or an object, which the reader reports as unreadable)
ItemKind = Literal[
    "message",
    "reasoning",
    "call",
    "output",
    "compaction",
    "server_call",
    "unsent",
    "other",
    "unhashable",
]


def usage_from(raw: Any) -> Usage | None:
    """Codex ``TokenUsage`` → ``Usage`` (None if it is not one).

    Codex's ``input_tokens`` is the whole prompt, cached tokens included (and, by the same
    reading, 0.169's ``cache_write_input_tokens``), so the uncached part is what is left.
    ``output_tokens`` already includes ``reasoning_output_tokens``.
    """
    if not isinstance(raw, dict):
        return None
    get = raw.get
    values = [_count(get(key) or 0, MAX_TOKENS) for key in USAGE_KEYS]
    if None in values:
        return None
    prompt, cached, written, output, reasoning = [value or 0 for value in values]
    return Usage(
        input_tokens=max(prompt - cached - written, 0),
        output_tokens=output,
        cache_read_tokens=cached,
        cache_write_tokens=written,
        reasoning_tokens=reasoning,
    )


def cumulative(raw: Any) -> tuple[int, ...] | None:
    """A thread's running total as a comparable key (None if it is not a usage object)."""
    if not isinstance(raw, dict):
        return None
    get = raw.get
    return tuple([_count(get(key), MAX_TOTAL_TOKENS) or 0 for key in _TOTAL_KEYS])


def _count(value: Any, limit: int) -> int | None:
    """``token_count``, with a whole number in range (nearly every figure) checked here."""
    if type(value) is int and 0 <= value <= limit:
        return value
    return token_count(value, limit)


class Entry(msgspec.Struct, frozen=True, gc=False):
    """One line (or one item of a compaction's history): ``record``, its value as written."""

    kind: ClassVar[str]
    record: Any


class NotObject(Entry, frozen=True, gc=False):
    """A line whose value is not a JSON object."""

    kind: ClassVar[str] = "not_object"


class UnknownType(Entry, frozen=True, gc=False):
    """A line of a type Codex is not known to write (``name``: its type, if a string)."""

    kind: ClassVar[str] = "unknown_type"
    name: str | None


class BadShape(Entry, frozen=True, gc=False):
    """A line of a known type that cannot be read (``reason``: what is wrong with it)."""

    kind: ClassVar[str] = "bad_shape"
    reason: str


class Line(Entry, frozen=True, gc=False):
    """A line of a known type with a payload object: its ``timestamp`` (if a string)."""

    timestamp: str | None


class Unreadable(Line, frozen=True, gc=False):
    """A line nested past what can be walked (``error``: what reading it raised)."""

    kind: ClassVar[str] = "unreadable"
    error: Exception


class Meta(Line, frozen=True, gc=False):
    """``session_meta``: the thread's id, the CLI's version, its cwd, the system prompt (newer
    builds log it) and, for a spawned sub-agent's rollout, its parent and its name."""

    kind: ClassVar[str] = "session_meta"
    session_id: str | None
    cli_version: str | None
    cwd: str | None
    instructions: str | None
    parent_thread: str | None
    description: str | None
    spawned: bool


class TurnContext(Line, frozen=True, gc=False):
    kind: ClassVar[str] = "turn_context"
    model: str | None


class WorldState(Line, frozen=True, gc=False):
    """A snapshot of the thread's settings: nothing in it is shown."""

    kind: ClassVar[str] = "world_state"


class Item(Line, frozen=True, gc=False):
    """A response item (``response_item``'s payload, or one in a compaction's history: then
    ``record`` is the item and ``timestamp`` None). The fields filled depend on ``item``:
    messages: ``role``, ``written_role``, ``blocks``, ``instructions``; reasoning: ``text``;
    calls: ``call_id``, ``name``, ``input_text``, ``raw_input``; outputs: ``call_id``, ``text``
    (the result), ``failed``; a server call: ``call_id`` (its item id, if any), ``name``,
    ``raw_input``."""

    kind: ClassVar[str] = "response_item"
    payload: dict[str, Any]
    item: ItemKind
    type: str | None
    role: Role = "user"
    written_role: str = ""  # (the role as written; not a known one: a user message to the reader)
    blocks: tuple[Block, ...] = ()
    instructions: bool = False  # a user message that is context Codex injected
    text: str = ""
    call_id: str | None = None
    name: str = ""
    input_text: str = ""
    raw_input: Any = None
    failed: bool = False

    # What the fork writer and the compaction source take, as written (the reader resolves
    # a local shell call's id and name its own way, and reads results and content in full).

    @property
    def logged_id(self) -> str:
        return str(self.payload.get("call_id"))

    @property
    def logged_name(self) -> str:
        return str(self.payload.get("name") or self.type)

    @property
    def logged_input(self) -> Any:
        payload = self.payload
        return payload.get("arguments", payload.get("input", payload.get("action")))

    @property
    def output(self) -> Any:
        """An output's content (an output object's ``content``, else the output itself)."""
        output = self.payload.get("output")
        return output.get("content", output) if isinstance(output, dict) else output

    @property
    def content(self) -> Any:
        return self.payload.get("content")

    @property
    def injected(self) -> bool:
        """A message whose text begins as context Codex injects (``INJECTED``)."""
        from ctxtop.engine.editing.turns import result_text  # (a report loads no editing)

        return result_text(self.payload.get("content")).lstrip().startswith(INJECTED)

    @property
    def turn_start(self) -> bool:
        """The user's own message: a new turn to the fork writer."""
        payload = self.payload
        return self.item == "message" and payload.get("role") == "user" and not self.injected

    @property
    def images(self) -> int:
        content = self.payload.get("content")
        parts = content if isinstance(content, list) else []
        return sum(1 for p in parts if isinstance(p, dict) and p.get("type") == "input_image")


class Usages(Line, frozen=True, gc=False):
    """``token_usage_record`` (0.169): one response's ``usage`` under its ``response_id``, and
    the thread's running ``total`` after it. (The figures are read when asked: only the session
    reader asks, once.)"""

    kind: ClassVar[str] = "token_usage_record"
    response_id: str | None

    @property
    def usage(self) -> Usage | None:
        return usage_from(self.record["payload"].get("usage"))

    @property
    def logs_tokens(self) -> bool:
        """The usage holds a token figure (an empty one was no request)."""
        return logs_tokens(self.record["payload"].get("usage"), USAGE_KEYS)

    @property
    def total(self) -> tuple[int, ...] | None:
        return cumulative(self.record["payload"].get("thread_token_usage"))


class Event(Line, frozen=True, gc=False):
    """``event_msg`` (``event``: its type, if a string). ``task_started`` starts a turn;
    ``token_count`` (``has_info``: not rate limits only; ``info_object``: readable) carries
    the thread's running ``total``, the ``last`` response's usage, and after a compaction
    Codex's ``estimate`` of the new history; ``window``: the context window either logs."""

    kind: ClassVar[str] = "event_msg"
    event: str | None
    window: int | None = None
    has_info: bool = False
    info_object: bool = False

    def _info(self, key: str) -> Any:
        info = self.record["payload"].get("info") if self.info_object else None
        return info.get(key) if isinstance(info, dict) else None

    @property
    def total(self) -> tuple[int, ...] | None:
        return cumulative(self._info("total_token_usage"))

    @property
    def last(self) -> Usage | None:
        return usage_from(self._info("last_token_usage"))

    @property
    def logs_tokens(self) -> bool:
        """The last usage holds a token figure (an empty one was no request)."""
        return logs_tokens(self._info("last_token_usage"), USAGE_KEYS)

    @property
    def estimate(self) -> int | None:
        """A last usage of only ``total_tokens``: Codex's estimate after a compaction."""
        raw = self._info("last_token_usage")
        if isinstance(raw, dict) and not raw.get("input_tokens") and not raw.get("output_tokens"):
            return token_count(raw.get("total_tokens"))
        return None


class Compacted(Line, frozen=True, gc=False):
    """``compacted``: the context becomes ``history`` (None: older builds log only the
    ``summary``); a non-object item stays None in it. ``promised``: the "after" ctxtop wrote
    into a compaction of its own (None: Codex's)."""

    kind: ClassVar[str] = "compacted"
    history: tuple[Item | None, ...] | None
    summary: str
    promised: int | None


CodexEntry = (
    NotObject
    | UnknownType
    | BadShape
    | Unreadable
    | Meta
    | TurnContext
    | WorldState
    | Item
    | Usages
    | Event
    | Compacted
)


def entry(record: Any, line: int) -> CodexEntry:
    """What the decoded value ``record`` (line ``line``) is in a Codex rollout."""
    if type(record) is not dict:
        return NotObject(record)
    kind = record.get("type")
    try:
        known = kind in ROLLOUT_TYPES
    except TypeError as error:  # (a list or an object) the reader says so
        return Unreadable(record, None, error)
    if not known:
        return UnknownType(record, kind if isinstance(kind, str) else None)
    payload = record.get("payload")
    if type(payload) is not dict:
        return BadShape(record, f"{kind} record without a payload object")
    timestamp = record.get("timestamp")
    if type(timestamp) is not str:
        timestamp = None
    try:
        if kind == "response_item":
            return item_entry(record, payload, timestamp)
        if kind == "event_msg":
            return _event(record, payload, timestamp)
        if kind == "token_usage_record":
            return Usages(record, timestamp, _str(payload.get("response_id")))
        if kind == "session_meta":
            return _meta(record, payload, timestamp)
        if kind == "turn_context":
            model = payload.get("model")
            return TurnContext(record, timestamp, model if isinstance(model, str) else None)
        if kind == "compacted":
            return _compacted(record, payload, timestamp)
        return WorldState(record, timestamp)
    except RecursionError as error:  # nested past Python's limit: the reader says so
        return Unreadable(record, timestamp, error)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _meta(record: Any, payload: dict[str, Any], timestamp: str | None) -> Meta:
    base = payload.get("base_instructions")
    spawn = thread_spawn(payload)
    description = None
    if spawn is not None:
        nickname, role = (
            payload.get(key) or spawn.get(key) for key in ("agent_nickname", "agent_role")
        )
        if isinstance(nickname, str) and isinstance(role, str):
            description = f"{nickname} ({role})"
        elif isinstance(nickname or role, str):
            description = nickname or role
    return Meta(
        record,
        timestamp,
        _str(payload.get("id")),
        _str(payload.get("cli_version")),
        _str(payload.get("cwd")),
        _str(base.get("text")) if isinstance(base, dict) else None,
        _str(spawn.get("parent_thread_id")) if spawn is not None else None,
        description,
        spawn is not None,
    )


def thread_spawn(meta: Any) -> dict[str, Any] | None:
    """``session_meta.source.subagent.thread_spawn`` of a spawned thread (None otherwise)."""
    source = meta.get("source") if isinstance(meta, dict) else None
    subagent = source.get("subagent") if isinstance(source, dict) else None
    spawn = subagent.get("thread_spawn") if isinstance(subagent, dict) else None
    return spawn if isinstance(spawn, dict) else None


def _event(record: Any, payload: dict[str, Any], timestamp: str | None) -> Event:
    kind = payload.get("type")
    if kind == "task_started":
        return Event(record, timestamp, kind, token_count(payload.get("model_context_window")))
    if kind != "token_count":
        return Event(record, timestamp, kind if isinstance(kind, str) else None)
    info = payload.get("info")
    if not isinstance(info, dict):
        return Event(record, timestamp, kind, has_info=info is not None)
    window = info.get("model_context_window")
    window = window if isinstance(window, int) and window > 0 else None
    return Event(record, timestamp, kind, window, True, True)


def _compacted(record: Any, payload: dict[str, Any], timestamp: str | None) -> Compacted:
    history = payload.get("replacement_history")
    items = (
        tuple(item_entry(item, item, None) if type(item) is dict else None for item in history)
        if isinstance(history, list)
        else None
    )
    summary = payload.get("message")
    return Compacted(
        record,
        timestamp,
        items,
        summary if isinstance(summary, str) else "",
        ctxtop_compaction_after(record),
    )


def item_entry(record: Any, payload: dict[str, Any], timestamp: str | None) -> Item:
    """The response item ``payload`` (written in ``record``)."""
    kind = payload.get("type")
    name = kind if isinstance(kind, str) else None
    if type(kind) is list or type(kind) is dict:
        return Item(record, timestamp, payload, "unhashable", name)
    if kind == "message":
        written = str(payload.get("role"))
        role = ROLES.get(written, "user")
        blocks = content_blocks(payload.get("content"))
        injected = bool(blocks) and blocks[0].text.lstrip().startswith(INSTRUCTIONS)
        return Item(record, timestamp, payload, "message", name, role, written, blocks, injected)
    if kind in OUTPUTS:
        output = payload.get("output")
        failed = isinstance(output, dict) and output.get("success") is False
        return Item(
            record,
            timestamp,
            payload,
            "output",
            name,
            call_id=_str(payload.get("call_id")),
            text=tool_output_text(output),
            failed=failed,
        )
    if kind in CALLS:
        return _call(record, payload, timestamp, kind)
    if kind == "reasoning":
        summary = payload.get("summary")
        parts = summary if isinstance(summary, list) else []
        text = "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
        return Item(record, timestamp, payload, "reasoning", name, text=text)
    if kind in ("compaction", "context_compaction"):
        return Item(record, timestamp, payload, "compaction", name)
    if isinstance(kind, str) and kind.endswith(SERVER_CALL_SUFFIX):
        item_id = payload.get("id") or payload.get("call_id")
        raw = payload.get("action", {key: v for key, v in payload.items() if key != "type"})
        return Item(
            record,
            timestamp,
            payload,
            "server_call",
            name,
            call_id=_str(item_id),
            name=kind.removesuffix(SERVER_CALL_SUFFIX),
            raw_input=raw,
        )
    return Item(record, timestamp, payload, "unsent" if kind in UNSENT_ITEMS else "other", name)


def _call(record: Any, payload: dict[str, Any], timestamp: str | None, kind: str) -> Item:
    call_id = payload.get("call_id") or (kind == "local_shell_call" and payload.get("id"))
    if kind == "local_shell_call":
        name, text, raw = "local_shell", "", payload.get("action")
    else:
        name = str(payload.get("name") or kind)
        value = payload.get("arguments" if kind == "function_call" else "input")
        text, raw = (value, None) if isinstance(value, str) else ("", value)
    return Item(
        record,
        timestamp,
        payload,
        "call",
        kind,
        call_id=_str(call_id),
        name=name,
        input_text=text,
        raw_input=raw,
    )


def tool_output_text(content: Any) -> str:
    """The text of a tool output: a string, ``{content|content_items}``, or a list of items."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        inner = content.get("content", content.get("content_items"))
        return tool_output_text(inner) if inner is not None else ""
    if isinstance(content, list):
        parts = []
        for item in content:
            if isinstance(item, dict):
                if isinstance(item.get("text"), str):
                    parts.append(item["text"])
                elif item.get("type") == "input_image":
                    parts.append("[image]")
            elif isinstance(item, str):
                parts.append(item)
        return "\n".join(parts)
    return ""


def content_blocks(content: Any) -> tuple[Block, ...]:
    """A message's content as the session model's blocks."""
    if isinstance(content, str):
        return (Block("text", content),)
    blocks: list[Block] = []
    for item in content if isinstance(content, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "input_image":
            blocks.append(Block("image"))
        elif isinstance(item.get("text"), str):
            blocks.append(Block("text", item["text"]))
        else:
            blocks.append(Block("other", raw=item))
    return tuple(blocks)

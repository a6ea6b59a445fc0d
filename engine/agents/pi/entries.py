"""Pi's typed record stream (engine/sessions/entries.py): what each line of a Pi session is, for
the session reader, the fork writer and the compaction source alike.

Pi 0.73.1 (``session-manager.ts``): the first line is the header ``{type: "session", version, id,
timestamp, cwd}``; every other line is an entry with an 8-hex ``id`` and the ``parentId`` of the
entry before it on its branch. ``message`` entries hold a ``user``, ``assistant``,
``toolResult``, ``bashExecution``, ``custom``, ``branchSummary`` or ``compactionSummary``
message; ``custom_message`` and ``branch_summary`` entries put text on the context too; a
``compaction`` entry replaces what comes before its ``firstKeptEntryId`` with its ``summary``.

An entry is a small class by kind (a struct is as costly to make as it has fields).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from ctxtop.engine.sessions.adapter import MAX_TOKENS, token_count
from ctxtop.engine.sessions.fork_mark import COMPACTION_KEY, CTXTOP_TRIGGER

# What a line is: its ``type`` (a ``message`` entry whose message is no object: "bad_message"),
# or a line that is no JSON object.
Kind = Literal[
    "header",
    "message",
    "bad_message",
    "custom_message",
    "branch_summary",
    "compaction",
    "model_change",
    "session_info",
    "ignored",
    "unknown",
    "not_object",
]
# Entry types that carry nothing the model sees or ctxtop shows (session-manager.ts).
IGNORED = frozenset({"thinking_level_change", "custom", "label"})
# Entries that put a message on the context (``buildSessionContext``'s ``appendMessage``).
SENT: frozenset[Kind] = frozenset({"message", "bad_message", "custom_message", "branch_summary"})
_KINDS: dict[Any, Kind] = {
    "session": "header",
    "message": "message",
    "custom_message": "custom_message",
    "branch_summary": "branch_summary",
    "compaction": "compaction",
    "model_change": "model_change",
    "session_info": "session_info",
    **{name: "ignored" for name in IGNORED},
}
# Messages whose text is their ``summary`` rather than their content.
_CONTENT_ROLES = frozenset({"assistant", "toolResult", "user", "bashExecution"})
_COUNT_KEYS = ("input", "output", "cacheRead", "cacheWrite")
# A failed call Pi logs with zero usage: no tokens were counted for it.
_FAILED = ("error", "aborted")  # (a tuple: a log may hold a list there)

# A content element: "text", "thinking" (an answer's), "tool_call" (an answer's ``toolCall``),
# "image" (a user-side one), "other" (any other object), "string" (a bare string), "value"
# (any other value in the list), "scalar" (a content that is neither text nor a list).
PartKind = Literal["text", "thinking", "tool_call", "image", "other", "string", "value", "scalar"]

# A model call's counted usage: (input without the cached part, as both wire APIs log it,
# output with reasoning, cache read, cache write).
Tokens = tuple[int, int, int, int]


class Part(msgspec.Struct, frozen=True, gc=False):
    """One element of a message's content: as written (``raw``) and as Pi takes it."""

    kind: PartKind
    raw: Any
    text: str = ""  # a text part's text, a thinking part's thinking, a bare string

    def said(self) -> str | None:
        """What a join of the content's texts takes: a bare string, or any object's text."""
        if self.kind == "text" or self.kind == "string":
            return self.text
        said = self.raw.get("text") if type(self.raw) is dict else None
        return said if type(said) is str else None


class CallPart(Part, frozen=True, gc=False):
    """An answer's ``toolCall``."""

    # Its id when it is text (None: the reader shows the part as an unknown one), and as a
    # fork's call key: whatever was written, made text ("None" when missing).
    id: str | None = None
    key: str = ""
    name: str = ""  # "unknown" when none
    arguments: Any = None


class PiEntry(msgspec.Struct, frozen=True, gc=False):
    """One line of a Pi session: the value as written (``record``) and what it is to Pi. The
    kinds with more facts are the subclasses below."""

    record: Any
    kind: Kind
    type: Any = None  # ``type`` as written
    id: str | None = None
    parent: str | None = None  # ``parentId`` when it is text
    # ``parentId`` written (null too): on the fork writer's tree (Pi's own walk takes those).
    parent_written: bool = False
    # A text ``id``, ``parentId`` absent, null or text: on the session reader's tree.
    linked: bool = False
    timestamp: str | None = None
    fault: str | None = None  # why the session reader leaves the line out


class Header(PiEntry, frozen=True, gc=False):
    session_id: str | None = None
    cwd: str | None = None
    version: int | None = None


class WithParts(PiEntry, frozen=True, gc=False):
    """An entry with content (a message, a custom message)."""

    parts: tuple[Part, ...] = ()

    def text(self) -> str:
        """The content's text parts, as the reader shows a tool result."""
        parts = self.parts
        if len(parts) == 1:  # (most results)
            return parts[0].text if parts[0].kind == "text" else ""
        return "\n".join([part.text for part in parts if part.kind == "text"])

    def said(self) -> str:
        """Every text of the content (a bare string, or any part's ``text``)."""
        said = [part.said() for part in self.parts]
        return "\n".join([text for text in said if text is not None])

    def images(self) -> int:
        return sum(1 for part in self.parts if part.kind == "image")


class MessageEntry(WithParts, frozen=True, gc=False):
    """A ``message`` entry whose message is an object: a user message, or one of a role whose
    text is its ``summary``, or of no role (``role`` None)."""

    role: str | None = None  # when it is text
    summary: str = ""  # a role's other than those with content


class Answer(MessageEntry, frozen=True, gc=False):
    """An ``assistant`` message: one model call."""

    model: str | None = None
    tokens: Tokens | None = None  # when it counts as a model call
    usage_fault: str | None = None  # why its usage is left out
    error: str | None = None  # a failed call's ``errorMessage``

    def calls(self) -> list[CallPart]:
        return [part for part in self.parts if isinstance(part, CallPart)]


class ToolResult(MessageEntry, frozen=True, gc=False):
    call_id: str | None = None  # ``toolCallId`` when it is text
    result_key: str = ""  # the same as a fork's call key (``CallPart.key``)
    tool_name: str = ""
    is_error: bool = False

    def result_text(self) -> str:
        """The result's text as a fork shows it: ``said``, or any other value as text."""
        parts = self.parts
        if len(parts) == 1 and parts[0].kind == "scalar":
            return str(parts[0].raw)
        return self.said()


class BashRun(MessageEntry, frozen=True, gc=False):
    """A ``!command`` the user ran (``bashExecution``): the model gets its command and output."""

    command: str = ""
    output: str = ""
    excluded: bool = False  # ``excludeFromContext`` (``!!``): not sent


class CustomMessage(WithParts, frozen=True, gc=False):
    """A ``custom_message`` entry (an extension's), sent as a user message."""


class BranchSummary(PiEntry, frozen=True, gc=False):
    summary: str = ""


class CompactionEntry(PiEntry, frozen=True, gc=False):
    summary: str = ""
    first_kept: str | None = None  # ``firstKeptEntryId``
    tokens_before: int | None = None
    trigger: str = "unknown"  # CTXTOP_TRIGGER (one ctxtop wrote), "extension" (``fromHook``)
    read_files: tuple[str, ...] = ()  # ``details``, of a compaction not from a hook
    modified_files: tuple[str, ...] = ()


class ModelChange(PiEntry, frozen=True, gc=False):
    model: str | None = None  # ``modelId``


class SessionInfo(PiEntry, frozen=True, gc=False):
    title: str | None = None  # ``name``


# The fields every entry of a JSON object starts with, in order.
_Head = tuple[dict[str, Any], Kind, Any, str | None, str | None, bool, bool, str | None, str | None]


def entry(record: Any, line: int) -> PiEntry:
    """What the decoded line ``record`` (line ``line``) is to Pi."""
    if type(record) is not dict:
        return PiEntry(record, "not_object", fault="not a JSON object")
    kind_name = record.get("type")
    timestamp = record.get("timestamp")
    if type(timestamp) is not str:
        timestamp = None
    entry_id, parent = record.get("id"), record.get("parentId")
    if type(entry_id) is not str:
        entry_id = None
    linked = entry_id is not None and (parent is None or type(parent) is str)
    if type(parent) is not str:
        parent = None
    written = "parentId" in record
    fault = None if linked else f"{kind_name} entry without an id or parentId"
    if kind_name == "message":
        raw = record.get("message")
        if type(raw) is dict:
            return _message(record, raw, entry_id, parent, written, linked, timestamp, fault)
        fault = fault or f"message entry {entry_id} without a message role"
        return PiEntry(
            record, "bad_message", kind_name, entry_id, parent, written, linked, timestamp, fault
        )
    kind = _KINDS.get(kind_name, "unknown") if type(kind_name) is str else "unknown"
    head: _Head = (record, kind, kind_name, entry_id, parent, written, linked, timestamp, fault)
    if kind == "header":  # (the reader takes it whatever its id and fault)
        session_id, cwd, version = record.get("id"), record.get("cwd"), record.get("version")
        return Header(
            *head[:-1],
            None,
            session_id if isinstance(session_id, str) else None,
            cwd if isinstance(cwd, str) else None,
            version if isinstance(version, int) else None,
        )
    if kind == "compaction":
        return _compaction(head)
    if kind == "custom_message":
        return CustomMessage(*head, _user_parts(record.get("content")))
    if kind == "branch_summary":
        return BranchSummary(*head, str(record.get("summary") or ""))
    if kind == "model_change":
        model = record.get("modelId")
        return ModelChange(*head, model if type(model) is str else None)
    if kind == "session_info":
        title = record.get("name")
        return SessionInfo(*head, title if type(title) is str else None)
    return PiEntry(*head)


def _message(
    record: dict[str, Any],
    raw: dict[str, Any],
    entry_id: str | None,
    parent: str | None,
    written: bool,
    linked: bool,
    timestamp: str | None,
    fault: str | None,
) -> MessageEntry:
    """A message entry. (Its fields are passed one by one, not as a tuple, to the two kinds of
    most lines: a struct made from a tuple costs two more, at one a line of a long log.)"""
    role = raw.get("role")
    content = raw.get("content")
    if role == "assistant":
        model, stop = raw.get("model"), raw.get("stopReason")
        tokens = _tokens(raw.get("usage"), stop)
        return Answer(
            record,
            "message",
            "message",
            entry_id,
            parent,
            written,
            linked,
            timestamp,
            fault,
            _answer_parts(content),
            role,
            "",
            model if type(model) is str else None,
            tokens if type(tokens) is tuple else None,
            f"assistant message {entry_id} with malformed usage" if tokens is False else None,
            str(raw.get("errorMessage") or "") if stop == "error" else None,
        )
    if type(content) is list and len(content) == 1:  # (most results: one text)
        parts: tuple[Part, ...] = (_user_part(content[0]),)
    else:
        parts = _user_parts(content)
    if role == "toolResult":
        call_id = raw.get("toolCallId")
        text_id = call_id if type(call_id) is str else None
        return ToolResult(
            record,
            "message",
            "message",
            entry_id,
            parent,
            written,
            linked,
            timestamp,
            fault,
            parts,
            role,
            "",
            text_id,
            text_id if text_id is not None else str(call_id),
            str(raw.get("toolName") or "unknown"),
            raw.get("isError") is True,
        )
    if type(role) is not str:
        role = None
        fault = fault or f"message entry {entry_id} without a message role"
    head: _Head = (
        record,
        "message",
        "message",
        entry_id,
        parent,
        written,
        linked,
        timestamp,
        fault,
    )
    if role == "bashExecution":
        command, output = raw.get("command"), raw.get("output") or ""
        excluded = bool(raw.get("excludeFromContext"))
        return BashRun(*head, parts, role, "", f"{command}", f"{output}", excluded)
    summary = "" if role in _CONTENT_ROLES else str(raw.get("summary") or "")
    return MessageEntry(*head, parts, role, summary)


def _answer_parts(content: Any) -> tuple[Part, ...]:
    """An answer's content: text, thinking, tool calls and other parts (a string is text to a
    join only: Pi's answers hold a list)."""
    if type(content) is str:
        return (Part("string", content, content),) if content else ()
    parts: list[Part] = []
    for part in content if type(content) is list else ():
        if type(part) is not dict:
            parts.append(_loose(part))
            continue
        kind = part.get("type")
        if kind == "text" and type(part.get("text")) is str:
            parts.append(Part("text", part, part["text"]))
        elif kind == "thinking" and type(part.get("thinking")) is str:
            parts.append(Part("thinking", part, part["thinking"]))
        elif kind == "toolCall":
            call_id = part.get("id")
            text_id = call_id if type(call_id) is str else None
            key = text_id if text_id is not None else str(call_id)
            name, arguments = str(part.get("name") or "unknown"), part.get("arguments")
            parts.append(CallPart("tool_call", part, "", text_id, key, name, arguments))
        else:
            parts.append(Part("other", part))
    return tuple(parts)


def _tokens(raw: Any, stop: Any) -> Tokens | bool | None:
    """An answer's usage when it counts as a model call; None when it holds no figure, or the
    call failed with none; False when it is malformed. (Written out: one a line of a long log.)"""
    if raw is None:
        return None
    if type(raw) is not dict:
        return False
    uncached, output = raw.get("input"), raw.get("output")
    read, write = raw.get("cacheRead"), raw.get("cacheWrite")
    # A figure under one of the names (``logs_tokens``).
    logged = not (
        uncached is None
        and output is None
        and read is None
        and write is None
        and raw.get("totalTokens") is None
    )
    uncached, output, read, write = uncached or 0, output or 0, read or 0, write or 0
    top = MAX_TOKENS
    if not (
        type(uncached) is type(output) is type(read) is type(write) is int
        and 0 <= uncached <= top
        and 0 <= output <= top
        and 0 <= read <= top
        and 0 <= write <= top
    ):  # (most are such ints; any other value as ``token_count`` takes it)
        uncached, output = token_count(uncached), token_count(output)
        read, write = token_count(read), token_count(write)
        if uncached is None or output is None or read is None or write is None:
            return False
    if not logged or (stop in _FAILED and uncached + output + read + write == 0):
        return None
    return (uncached, output, read, write)


def _user_parts(content: Any) -> tuple[Part, ...]:
    """A user-side content (a user message, a tool result, a custom message): text, image and
    other parts, or a string."""
    if type(content) is str:
        return (Part("text", content, content),) if content else ()
    if type(content) is not list:
        return () if content is None else (Part("scalar", content),)
    if len(content) == 1:  # (most results: one text)
        return (_user_part(content[0]),)
    return tuple([_user_part(part) for part in content])


def _user_part(part: Any) -> Part:
    if type(part) is not dict:
        return _loose(part)
    kind = part.get("type")
    text = part.get("text")
    if kind == "text" and type(text) is str:
        return Part("text", part, text)
    return Part("image" if kind == "image" else "other", part)


def _loose(value: Any) -> Part:
    """A content element that is no object: a bare string is text to a join, not a part."""
    if type(value) is str:
        return Part("string", value, value)
    return Part("value", value)


def _compaction(head: _Head) -> CompactionEntry:
    record, entry_id, fault = head[0], head[3], head[-1]
    summary = record.get("summary")
    if type(summary) is not str:
        fault = fault or f"compaction {entry_id} without a summary"
    kept = record.get("firstKeptEntryId")
    from_hook = bool(record.get("fromHook"))
    trigger = (
        CTXTOP_TRIGGER
        if record.get(COMPACTION_KEY) == CTXTOP_TRIGGER
        else "extension"
        if from_hook
        else "unknown"
    )
    details = record.get("details") if not from_hook else None
    read: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    if type(details) is dict:
        read = _texts(details.get("readFiles"))
        modified = _texts(details.get("modifiedFiles"))
    return CompactionEntry(
        *head[:-1],
        fault,
        str(summary or ""),
        kept if type(kept) is str else None,
        token_count(record.get("tokensBefore")),
        trigger,
        read,
        modified,
    )


def _texts(value: Any) -> tuple[str, ...]:
    return tuple(item for item in value if isinstance(item, str)) if type(value) is list else ()

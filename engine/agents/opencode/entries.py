"""OpenCode's typed record stream (engine/sessions/entries.py): each line its reader takes (a
row of ``opencode.db`` as rows.py hands it out, or an export document: export.py) made one
entry that says what it is, for the reader, the fork writer and the compaction source alike.
The rules of what a row means (reader.py's text lists what OpenCode 1.18.33 writes) are here
only; each entry keeps its row as written (``record``, and ``data``: the row's JSON), which a
fork copies and rewrites.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from ctxtop.engine.agents.opencode.export import export_rows, is_export
from ctxtop.engine.sessions.adapter import token_count
from ctxtop.engine.sessions.fork_mark import marked_tokens
from ctxtop.engine.sessions.model import Usage

# What OpenCode sends for the user message of a compaction (message-v2.ts toModelMessages),
# and for a tool output its pruning cleared (``state.time.compacted``).
COMPACTION_PROMPT = "What did we do so far?"
CLEARED_OUTPUT = "[Old tool result content cleared]"
_DONE = ("completed", "error")


class SessionRow(msgspec.Struct, frozen=True, gc=False):
    """A session's row (the session read, or one of its sub-agents')."""

    record: dict[str, Any]
    id: str | None
    title: str | None
    directory: str | None
    version: str | None
    created: str | None  # time_created as ISO text
    time_created: int  # (0 when not a count)
    slug: str | None
    settings: dict[str, Any]  # the session's own agent, model, permission (JSON columns decoded)


class MessageRow(msgspec.Struct, frozen=True, gc=False):
    """A message (``role`` user | assistant; an assistant message is one model call)."""

    record: dict[str, Any]
    id: str
    session_id: str | None
    data: dict[str, Any]
    role: str  # (another role as text: "message <role>" is an unknown type)
    created: str | None  # time.created as ISO text
    touched: str | None  # time.completed, else time.created
    usage: Usage | None  # the call's tokens (None: none, or malformed)
    bad_tokens: bool  # tokens there but not counts
    model: str | None
    summary: bool  # the summary call of a compaction
    finished: bool  # it has a ``finish`` and no ``error``
    parent_id: str | None  # (a summary: its compaction request)


class ToolCall(msgspec.Struct, frozen=True, gc=False):
    """A tool part's call (one with a ``callID`` and a ``state``)."""

    call_id: str
    name: str
    state: dict[str, Any]
    input: Any
    done: bool  # completed or failed: ``output`` is its result
    is_error: bool
    output: str | None  # the text OpenCode sends as its result (None: not done)
    subagent: str | None  # the child session a ``task`` call ran (``state.metadata.sessionId``)


class PartRow(msgspec.Struct, frozen=True, gc=False):
    """A part of a message (text, reasoning, tool, compaction, file, step-finish...)."""

    record: dict[str, Any]
    id: str
    message_id: str
    session_id: str | None
    data: dict[str, Any]
    type: str | None  # (None: a part without a type)
    text: str | None  # a text or reasoning part's text
    synthetic: bool  # OpenCode's own words, not the user's
    ignored: bool  # a text not sent
    auto: bool  # a compaction request OpenCode made itself
    call: ToolCall | None
    media: bool  # a file part that is an image or a PDF
    file_name: str  # a file part's filename, else its url
    fork_tokens: int | None  # ctxtop's fork mark in the part's or its state's metadata


class ExportDoc(msgspec.Struct, frozen=True, gc=False):
    """An export file's document (``opencode export``, or a fork ctxtop wrote): its rows."""

    record: dict[str, Any]
    session_id: str
    rows: tuple[Entry, ...]
    broken: str | None = None  # the error that stopped its rows (they are those before it)


OddKind = Literal["not-object", "bad-row", "unknown-table"]


class OddLine(msgspec.Struct, frozen=True, gc=False):
    """A line that is no row the reader takes: not an object, a row without an id or its
    data (``bad-row``), or a row of a table it does not know."""

    record: Any
    kind: OddKind
    table: str  # the ``opencode`` field as text


Entry = SessionRow | MessageRow | PartRow | ExportDoc | OddLine


def entry(record: Any, line: int) -> Entry:
    """What the line ``record`` (any decoded JSON value) is to OpenCode's reader."""
    if type(record) is not dict:
        return OddLine(record, "not-object", "")
    if is_export(record):
        return _export(record, line)
    table = record.get("opencode")
    if table == "session":
        return _session(record)
    data, row_id = record.get("data"), record.get("id")
    if type(data) is not dict or type(row_id) is not str:
        return OddLine(record, "bad-row", f"{table}")
    if table == "message":
        return _message(record, row_id, data)
    if table == "part":
        return _part(record, row_id, data)
    return OddLine(record, "unknown-table", f"{table}")


def _export(document: dict[str, Any], line: int) -> ExportDoc:
    rows: list[Entry] = []
    broken = None
    try:
        rows.extend(entry(row, line) for row in export_rows(document))
    except (TypeError, AttributeError) as error:  # (a message's parts that are no list)
        broken = type(error).__name__
    return ExportDoc(document, document["info"]["id"], tuple(rows), broken)


def _text(value: Any) -> str | None:
    return value if type(value) is str else None


def _session(row: dict[str, Any]) -> SessionRow:
    created = row.get("time_created")
    settings = {"agent": row.get("agent")}
    settings.update((key, _json_column(row.get(key))) for key in ("model", "permission"))
    return SessionRow(
        row,
        _text(row.get("id")),
        _text(row.get("title")),
        _text(row.get("directory")),
        _text(row.get("version")),
        timestamp(created),
        created if isinstance(created, int) else 0,
        _text(row.get("slug")),
        {key: value for key, value in settings.items() if value is not None},
    )


def _json_column(value: Any) -> Any:
    """A JSON text column (``model``, ``permission``) decoded; None when it is not JSON."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return None


def _message(row: dict[str, Any], message_id: str, data: dict[str, Any]) -> MessageRow:
    role = data.get("role")
    times = data.get("time")
    times = times if isinstance(times, Mapping) else {}
    created = timestamp(times.get("created"))
    completed = times.get("completed")
    tokens = data.get("tokens")
    usage = usage_from(tokens) if isinstance(tokens, Mapping) else None
    parent = data.get("parentID")
    return MessageRow(
        row,
        message_id,
        _text(row.get("session_id")),
        data,
        role if type(role) is str else f"{role}",
        created,
        timestamp(completed) if completed else created,
        usage,
        usage is None and isinstance(tokens, Mapping),
        _text(data.get("modelID")),
        data.get("summary") is True,
        bool(data.get("finish")) and "error" not in data,
        _text(parent),
    )


def _part(row: dict[str, Any], part_id: str, data: dict[str, Any]) -> PartRow:
    kind = data.get("type")
    kind = kind if type(kind) is str else None
    call = _call(data) if kind == "tool" else None
    fork_tokens = marked_tokens(data.get("metadata"))
    state = data.get("state")
    if isinstance(state, Mapping):  # (the state's mark wins, on any part that has one)
        marked = marked_tokens(state.get("metadata"))
        fork_tokens = fork_tokens if marked is None else marked
    file_name = ""
    if kind == "file":
        file_name = str(data.get("filename") or data.get("url"))
    mime = data.get("mime")
    return PartRow(
        row,
        part_id,
        f"{row.get('message_id')}",
        _text(row.get("session_id")),
        data,
        kind,
        _text(data.get("text")),
        bool(data.get("synthetic")),
        bool(data.get("ignored")),
        bool(data.get("auto")),
        call,
        isinstance(mime, str) and mime.startswith(("image/", "application/pdf")),
        file_name,
        fork_tokens,
    )


def _call(data: dict[str, Any]) -> ToolCall | None:
    call_id, state = data.get("callID"), data.get("state")
    if type(call_id) is not str or type(state) is not dict:
        return None
    status = state.get("status")
    done = status in _DONE
    metadata = state.get("metadata")
    child = metadata.get("sessionId") if isinstance(metadata, Mapping) else None
    return ToolCall(
        call_id,
        f"{data.get('tool') or 'unknown'}",
        state,
        state.get("input"),
        done,
        status == "error",
        tool_output(state) if done else None,
        _text(child),
    )


def tool_output(tool_state: Mapping[str, Any]) -> str:
    """The text OpenCode sends for a finished call: its output, its error, or the words it
    puts for an output its pruning cleared."""
    if tool_state.get("status") == "error":
        error = tool_state.get("error")
        return error if isinstance(error, str) else ""
    times = tool_state.get("time")
    if isinstance(times, Mapping) and times.get("compacted"):
        return CLEARED_OUTPUT
    output = tool_state.get("output")
    return output if isinstance(output, str) else ""


def usage_from(tokens: Mapping[str, Any]) -> Usage | None:
    """OpenCode ``tokens`` → ``Usage`` (None when a figure is not a count)."""
    cache = tokens.get("cache") or {}
    if not isinstance(cache, Mapping):
        return None
    counts = [
        token_count(value or 0)
        for value in (
            tokens.get("input"),
            tokens.get("output"),
            tokens.get("reasoning"),
            cache.get("read"),
            cache.get("write"),
        )
    ]
    if any(count is None for count in counts):
        return None
    uncached, output, reasoning, read, write = (count or 0 for count in counts)
    return Usage(
        input_tokens=uncached,
        output_tokens=output + reasoning,
        cache_read_tokens=read,
        cache_write_tokens=write,
        reasoning_tokens=reasoning,
    )


def timestamp(milliseconds: Any) -> str | None:
    """OpenCode's times (epoch milliseconds) as the ISO text the other agents log."""
    if isinstance(milliseconds, int) and not isinstance(milliseconds, bool) and milliseconds > 0:
        moment = datetime.datetime.fromtimestamp(milliseconds / 1000, datetime.UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{milliseconds % 1000:03d}Z"
    return None

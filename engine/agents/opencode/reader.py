"""OpenCode sessions: rows of ``opencode.db`` (tables session, message, part), as ``rows.py``
hands them out, named ``<opencode.db>/<session id>``, or an export file (``opencode export``,
a fork ctxtop wrote: engine/agents/opencode/export.py) read as those rows.

What the rows hold (OpenCode 1.18.33: its ``session/session.sql.ts`` and ``message-v2.ts``,
checked against a database the real CLI wrote; tests/agents/test_opencode.py):

- ``message.data``: ``role`` user | assistant. An assistant message is one model call (one
  step): ``tokens {total, input, output, reasoning, cache {read, write}}`` with ``input`` the
  uncached prompt and ``output`` without the reasoning, ``modelID``, ``finish``, ``time``.
  It is written when the step starts (tokens all 0) and again when it ends.
- ``part.data``: ``text``, ``reasoning``, ``tool {tool, callID, state {status, input, output,
  error, time.compacted}}``, ``compaction {auto, overflow}`` (on a user message: the request
  to summarise, sent as "What did we do so far?"), ``step-start``/``step-finish`` (the step's
  usage again), ``patch``, ``file``, ``snapshot``, ``agent``, ``subtask``.
- a compaction is that user message, then an assistant message with ``summary: true`` (the
  summary call, with its own tokens); the model sees from that user message on
  (``MessageV2.filterCompacted``).
- a sub-agent (``task`` tool) is a child session (``parent_id``); the parent's tool part names
  it in ``state.metadata.sessionId``.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxtop.engine.agents.opencode import place
from ctxtop.engine.agents.opencode.export import export_rows, is_export
from ctxtop.engine.agents.opencode.rows import RowTailer, address, split_address
from ctxtop.engine.sessions.adapter import CERTAIN, NOT_MINE, Adapter, token_count
from ctxtop.engine.sessions.fork_mark import marked_tokens
from ctxtop.engine.sessions.model import (
    Block,
    Compaction,
    ForkEstimate,
    Message,
    SessionState,
    Usage,
)
from ctxtop.engine.sessions.tail import LineTailer

# What OpenCode sends for the user message of a compaction (message-v2.ts toModelMessages),
# and for a tool output its pruning cleared (``state.time.compacted``).
COMPACTION_PROMPT = "What did we do so far?"
CLEARED_OUTPUT = "[Old tool result content cleared]"
# Parts that are never sent to the model.
_SCREEN_PARTS = {"step-start", "step-finish", "patch", "snapshot", "agent", "retry", "subtask"}


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


def _timestamp(milliseconds: Any) -> str | None:
    """OpenCode's times (epoch milliseconds) as the ISO text the other agents log."""
    if isinstance(milliseconds, int) and not isinstance(milliseconds, bool) and milliseconds > 0:
        moment = datetime.datetime.fromtimestamp(milliseconds / 1000, datetime.UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{milliseconds % 1000:03d}Z"
    return None


def _times(data: Mapping[str, Any]) -> Mapping[str, Any]:
    times = data.get("time")
    return times if isinstance(times, Mapping) else {}


class _Window:
    """One session's context (the main one or a sub-agent's) built from its rows."""

    def __init__(self, state: SessionState) -> None:
        self.state = state
        self.position: dict[str, int] = {}  # context message id → index in state.context
        self.roles: dict[str, str] = {}  # OpenCode message id → role
        self.parts: dict[str, dict[str, dict[str, Any]]] = {}  # message id → part id → data
        self.lines: dict[str, int] = {}  # message id → line of its row
        self.compaction_asks: dict[str, bool] = {}  # user message id → auto
        self.answered_asks: set[str] = set()  # those a finished summary answered
        self.summarised: set[str] = set()  # summary messages already taken as compactions
        self.awaiting_after: Compaction | None = None  # no request followed it yet

    # -- the context as an ordered map ---------------------------------------------------------

    def _put(self, message: Message, after: str | None = None) -> None:
        context = self.state.context
        index = self.position.get(message.id)
        if index is not None:
            context[index] = message
            return
        at = len(context)
        if after is not None and after in self.position:
            at = self.position[after] + 1
            while at < len(context) and context[at].id.startswith(after + "/"):
                at += 1  # after its other results
        context.insert(at, message)
        for later in range(at, len(context)):
            self.position[context[later].id] = later

    def _drop_before(self, message_id: str) -> None:
        index = self.position.get(message_id)
        if index is None:
            return
        del self.state.context[:index]
        self.position = {message.id: at for at, message in enumerate(self.state.context)}

    # -- rows -------------------------------------------------------------------------------------

    def message(self, row: Mapping[str, Any], data: Mapping[str, Any], line: int) -> None:
        state = self.state
        message_id = str(row["id"])
        role = data.get("role")
        if role not in ("user", "assistant"):
            state.unknown_type(f"message {role}")
            return
        self.roles[message_id] = str(role)
        self.lines.setdefault(message_id, line)
        times = _times(data)
        timestamp = _timestamp(times.get("completed") or times.get("created"))
        state.touch(timestamp)
        self._rebuild(message_id, data)
        if role != "assistant":
            return
        tokens = data.get("tokens")
        if not isinstance(tokens, Mapping):
            return
        usage = usage_from(tokens)
        if usage is None:
            state.skip(line, f"assistant message {message_id} with malformed tokens")
            return
        if usage.total == 0:
            return  # the step has not ended (or failed before any usage): no request yet
        model = data.get("modelID")
        summary = data.get("summary") is True
        newest = not state.context or state.context[-1].id.split("/")[0] == message_id
        last = state.last_response
        previous = last.usage.total if last is not None and last.key != message_id else None
        state.record_response(
            message_id,
            usage,
            model=model if isinstance(model, str) else None,
            line=self.lines[message_id],
            timestamp=timestamp,
            # The summary call's prompt was the history it replaced, not the new context.
            on_context=not summary and (newest or last is None or last.key == message_id),
        )
        if summary:
            if data.get("finish") and "error" not in data:
                self._compacted(message_id, data, previous, timestamp)
            return
        index = self.position.get(message_id)
        if index is not None:
            state.context[index].response_key = message_id
        if self.awaiting_after is not None:
            self.awaiting_after.settle(usage.input_tokens_total)
            self.awaiting_after = None

    def _compacted(
        self, message_id: str, data: Mapping[str, Any], before: int | None, ts: str | None
    ) -> None:
        """A finished summary: the model sees from its compaction request on."""
        if message_id in self.summarised:
            return
        self.summarised.add(message_id)
        state = self.state
        asked = data.get("parentID")
        auto = self.compaction_asks.get(asked) if isinstance(asked, str) else None
        if isinstance(asked, str):
            self.answered_asks.add(asked)
        state.keep_context()
        if isinstance(asked, str):
            self._drop_before(asked)
        compaction = Compaction(
            trigger="unknown" if auto is None else "auto" if auto else "manual",
            pre_tokens=before,
            line=self.lines[message_id],
            timestamp=ts,
        )
        state.record_compaction(compaction)
        self.awaiting_after = compaction

    def part(self, row: Mapping[str, Any], data: Mapping[str, Any], line: int) -> None:
        message_id = str(row.get("message_id"))
        kind = data.get("type")
        if not isinstance(kind, str):
            self.state.skip(line, f"part {row.get('id')} without a type")
            return
        self.parts.setdefault(message_id, {})[str(row["id"])] = dict(data)
        self._fork_mark(data, line)
        if kind == "compaction":
            self.compaction_asks[message_id] = bool(data.get("auto"))
        if kind == "tool":
            self._tool(data, line)
        if message_id in self.roles:
            self._rebuild(message_id, None)

    def _fork_mark(self, data: Mapping[str, Any], line: int) -> None:
        """ctxtop's mark in a part's ``metadata`` (engine/agents/opencode/writer.py): a fork
        it wrote, imported; its context is ctxtop's estimate until OpenCode's next request."""
        tool_state = data.get("state")
        for holder in (data, tool_state if isinstance(tool_state, Mapping) else {}):
            metadata = holder.get("metadata")
            tokens = marked_tokens(metadata) if isinstance(metadata, Mapping) else None
            if tokens is not None:
                self.state.fork_estimate = ForkEstimate(tokens, line)

    def _tool(self, data: Mapping[str, Any], line: int) -> None:
        call_id, name = data.get("callID"), data.get("tool")
        tool_state = data.get("state")
        if not isinstance(call_id, str) or not isinstance(tool_state, Mapping):
            self.state.skip(line, "tool part without callID or state")
            return
        state = self.state
        if call_id not in state.tools:
            state.record_tool_call(
                call_id, str(name or "unknown"), line=line, raw_input=tool_state.get("input")
            )
        status = tool_state.get("status")
        if status in ("completed", "error"):
            text = tool_output(tool_state)
            state.record_tool_result(call_id, text, is_error=status == "error")

    def _rebuild(self, message_id: str, data: Mapping[str, Any] | None) -> None:
        """The context messages of one OpenCode message, from its parts as they are now."""
        role = self.roles[message_id]
        parts = self.parts.get(message_id, {})
        blocks: list[Block] = []
        results: list[Block] = []
        texts = [part for part in parts.values() if part.get("type") == "text"]
        # OpenCode's own words (the "Continue…" after a compaction), not the user's.
        synthetic = role == "user" and bool(texts) and all(p.get("synthetic") for p in texts)
        kind = "meta" if synthetic else "message"
        for part_id in sorted(parts):
            part = parts[part_id]
            ptype = part.get("type")
            if ptype == "text" and isinstance(part.get("text"), str):
                if not part.get("ignored"):
                    blocks.append(Block("text", part["text"]))
            elif ptype == "reasoning" and isinstance(part.get("text"), str):
                blocks.append(Block("thinking", part["text"]))
            elif ptype == "compaction":
                blocks.append(Block("text", COMPACTION_PROMPT))
                kind = "meta"  # OpenCode's request for the summary, not the user's words
            elif ptype == "tool":
                call_id, tool_state = part.get("callID"), part.get("state")
                if not isinstance(call_id, str) or not isinstance(tool_state, Mapping):
                    continue
                name = str(part.get("tool") or "unknown")
                blocks.append(Block("tool_use", "", call_id, name, raw=tool_state.get("input")))
                status = tool_state.get("status")
                if status in ("completed", "error"):
                    text = tool_output(tool_state)
                    results.append(Block("tool_result", text, call_id, is_error=status == "error"))
            elif ptype == "file":
                blocks.append(Block("image" if _is_media(part) else "other", raw=part))
            elif ptype not in _SCREEN_PARTS:
                self.state.unknown_type(f"part {ptype}")
        if data is None:
            timestamp = None
        else:
            timestamp = _timestamp(_times(data).get("created"))
            if data.get("summary") is True and role == "assistant":
                kind = "compact_summary"
        existing = self.position.get(message_id)
        if existing is not None:
            old = self.state.context[existing]
            timestamp = timestamp or old.timestamp
            kind = "compact_summary" if old.kind == "compact_summary" else kind
        message = Message(
            message_id,
            "assistant" if role == "assistant" else "user",
            blocks,
            self.lines.get(message_id, 0),
            timestamp,
            kind=kind,
        )
        if role == "assistant" and message_id in self.state.responses and kind == "message":
            message.response_key = message_id
        self._put(message)
        if results:
            result_id = f"{message_id}/results"
            self._put(Message(result_id, "tool", results, message.line, timestamp), message_id)


def tool_output(tool_state: Mapping[str, Any]) -> str:
    if tool_state.get("status") == "error":
        error = tool_state.get("error")
        return error if isinstance(error, str) else ""
    times = tool_state.get("time")
    if isinstance(times, Mapping) and times.get("compacted"):
        return CLEARED_OUTPUT
    output = tool_state.get("output")
    return output if isinstance(output, str) else ""


def _is_media(part: Mapping[str, Any]) -> bool:
    mime = part.get("mime")
    return isinstance(mime, str) and mime.startswith(("image/", "application/pdf"))


class OpenCodeAdapter(Adapter):
    agent = "opencode"
    label = "OpenCode"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        found = split_address(path)
        self.state.session_id = found[1] if found is not None else None
        self._main = _Window(self.state)
        self._windows: dict[str, _Window] = {}
        self._task_calls: dict[str, str] = {}  # child session id → the parent's call id
        self._children: dict[str, Mapping[str, Any]] = {}  # child session id → its row

    @classmethod
    def detect(cls, head: Sequence[Any]) -> int:
        for record in head:
            if is_export(record):
                return CERTAIN
            if not isinstance(record, dict) or not isinstance(record.get("id"), str):
                continue
            if record.get("opencode") in ("session", "message"):
                return CERTAIN
        return NOT_MINE

    @classmethod
    def tailer(cls, path: Path, clock: Any) -> LineTailer | None:
        return RowTailer(path, clock) if place.names_session(path) else None

    @classmethod
    def written(cls, path: Path) -> tuple[float, int] | None:
        return place.written(path) if place.names_session(path) else None

    @classmethod
    def misnamed(cls, path: Path) -> str | None:
        sessions = place.session_ids(path) if place.database_of(path) == path else []
        if not sessions:
            return None
        first = address(path, sessions[0])
        return f"an OpenCode database: name one of its sessions, e.g. {first} " + (
            "(ctxtop sessions lists them)"
        )

    @classmethod
    def store_changed(
        cls, path: Path, since: float
    ) -> tuple[Path, list[tuple[Path, float]]] | None:
        database = place.database_of(path)
        if database is None:
            return None
        return database, [
            (address(database, session_id), when)
            for session_id, when in place.sessions_since(database, since)
        ]

    def _window(self, session_id: Any) -> _Window:
        if session_id == self.state.session_id or not isinstance(session_id, str):
            return self._main
        window = self._windows.get(session_id)
        if window is None:
            child = self.state.subagent(session_id)
            window = self._windows[session_id] = _Window(child)
            self._describe(session_id)
        return window

    def _describe(self, session_id: str) -> None:
        child = self.state.subagents.get(session_id)
        if child is None:
            return
        row = self._children.get(session_id)
        if row is not None and isinstance(row.get("title"), str):
            child.description = row["title"]
        if session_id in self._task_calls:
            child.parent_tool_call_id = self._task_calls[session_id]

    def feed(self, record: Any, line: int) -> None:
        if not isinstance(record, dict):
            self.state.skip(line, "not a JSON object")
            return
        if is_export(record):  # a fork ctxtop wrote, or OpenCode's own export: its rows
            self.state.session_id = self.state.session_id or record["info"]["id"]
            for row in export_rows(record):
                self.feed(row, line)
            return
        table = record.get("opencode")
        if table == "session":
            self._session(record)
            return
        data = record.get("data")
        if not isinstance(data, dict) or not isinstance(record.get("id"), str):
            self.state.skip(line, f"{table} row without id or data")
            return
        window = self._window(record.get("session_id"))
        if table == "message":
            window.message(record, data, line)
        elif table == "part":
            window.part(record, data, line)
            if window is self._main and data.get("type") == "tool":
                self._note_task(data)
        else:
            self.state.unknown_type(str(table))

    def _session(self, row: Mapping[str, Any]) -> None:
        state = self.state
        if row.get("id") == state.session_id:
            if isinstance(row.get("title"), str):
                state.title = row["title"]
            if isinstance(row.get("directory"), str):
                state.cwd = row["directory"]
            if isinstance(row.get("version"), str):
                state.agent_version = row["version"]
            state.touch(_timestamp(row.get("time_created")))
        elif isinstance(row.get("id"), str):
            self._children[row["id"]] = row
            self._describe(row["id"])

    def _note_task(self, data: Mapping[str, Any]) -> None:
        tool_state = data.get("state")
        metadata = tool_state.get("metadata") if isinstance(tool_state, Mapping) else None
        child = metadata.get("sessionId") if isinstance(metadata, Mapping) else None
        if isinstance(child, str) and isinstance(data.get("callID"), str):
            self._task_calls[child] = data["callID"]
            self._describe(child)

    def compacting(self) -> bool:
        """A compaction was asked for (its user message is written) and its summary has not
        finished yet."""
        return bool(set(self._main.compaction_asks) - self._main.answered_asks)

    # -- agent facts -------------------------------------------------------------------------------

    def autocompact_at(self, context_window: int) -> int | None:
        return place.compaction_point(context_window, self.state.model, os.environ)

    @classmethod
    def cli_window(cls, model: str | None) -> int | None:
        return place.model_limits(model, os.environ).context

    @classmethod
    def discover(cls, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        for database in place.databases(env, home):
            for session_id in place.session_ids(database):
                yield address(database, session_id)


__all__ = ["OpenCodeAdapter", "usage_from"]

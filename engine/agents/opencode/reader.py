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

import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxtop.engine.agents.opencode import place
from ctxtop.engine.agents.opencode.entries import (
    COMPACTION_PROMPT,
    Entry,
    ExportDoc,
    MessageRow,
    OddLine,
    PartRow,
    SessionRow,
    entry,
)
from ctxtop.engine.agents.opencode.export import is_export
from ctxtop.engine.agents.opencode.rows import RowTailer, address, split_address
from ctxtop.engine.sessions.adapter import CERTAIN, NOT_MINE, Adapter
from ctxtop.engine.sessions.model import (
    Block,
    Compaction,
    ForkEstimate,
    Message,
    SessionState,
)
from ctxtop.engine.sessions.tail import LineTailer

# Parts that are never sent to the model.
_SCREEN_PARTS = {"step-start", "step-finish", "patch", "snapshot", "agent", "retry", "subtask"}


class _Window:
    """One session's context (the main one or a sub-agent's) built from its rows."""

    def __init__(self, state: SessionState) -> None:
        self.state = state
        self.position: dict[str, int] = {}  # context message id → index in state.context
        self.roles: dict[str, str] = {}  # OpenCode message id → role
        self.parts: dict[str, dict[str, PartRow]] = {}  # message id → part id → part
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

    def message(self, message: MessageRow, line: int) -> None:
        state = self.state
        message_id = message.id
        role = message.role
        if role not in ("user", "assistant"):
            state.unknown_type(f"message {role}")
            return
        self.roles[message_id] = role
        self.lines.setdefault(message_id, line)
        timestamp = message.touched
        state.touch(timestamp)
        self._rebuild(message_id, message)
        if role != "assistant":
            return
        usage = message.usage
        if usage is None:
            if message.bad_tokens:
                state.skip(line, f"assistant message {message_id} with malformed tokens")
            return
        if usage.total == 0:
            return  # the step has not ended (or failed before any usage): no request yet
        summary = message.summary
        newest = not state.context or state.context[-1].id.split("/")[0] == message_id
        last = state.last_response
        previous = last.usage.total if last is not None and last.key != message_id else None
        state.record_response(
            message_id,
            usage,
            model=message.model,
            line=self.lines[message_id],
            timestamp=timestamp,
            # The summary call's prompt was the history it replaced, not the new context.
            on_context=not summary and (newest or last is None or last.key == message_id),
        )
        if summary:
            if message.finished:
                self._compacted(message_id, message.parent_id, previous, timestamp)
            return
        index = self.position.get(message_id)
        if index is not None:
            state.context[index].response_key = message_id
        if self.awaiting_after is not None:
            self.awaiting_after.settle(usage.input_tokens_total)
            self.awaiting_after = None

    def _compacted(
        self, message_id: str, asked: str | None, before: int | None, ts: str | None
    ) -> None:
        """A finished summary: the model sees from its compaction request on (``asked``)."""
        if message_id in self.summarised:
            return
        self.summarised.add(message_id)
        state = self.state
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

    def part(self, part: PartRow, line: int) -> None:
        message_id = part.message_id
        kind = part.type
        if kind is None:
            self.state.skip(line, f"part {part.id} without a type")
            return
        self.parts.setdefault(message_id, {})[part.id] = part
        if part.fork_tokens is not None:
            # ctxtop's mark (writer.py): a fork it wrote, imported; its context is ctxtop's
            # estimate until OpenCode's next request.
            self.state.fork_estimate = ForkEstimate(part.fork_tokens, line)
        if kind == "compaction":
            self.compaction_asks[message_id] = part.auto
        if kind == "tool":
            self._tool(part, line)
        if message_id in self.roles:
            self._rebuild(message_id, None)

    def _tool(self, part: PartRow, line: int) -> None:
        call = part.call
        if call is None:
            self.state.skip(line, "tool part without callID or state")
            return
        state = self.state
        if call.call_id not in state.tools:
            state.record_tool_call(call.call_id, call.name, line=line, raw_input=call.input)
        if call.output is not None:
            state.record_tool_result(call.call_id, call.output, is_error=call.is_error)

    def _rebuild(self, message_id: str, row: MessageRow | None) -> None:
        """The context messages of one OpenCode message, from its parts as they are now."""
        role = self.roles[message_id]
        parts = self.parts.get(message_id, {})
        blocks: list[Block] = []
        results: list[Block] = []
        texts = [part for part in parts.values() if part.type == "text"]
        # OpenCode's own words (the "Continue…" after a compaction), not the user's.
        synthetic = role == "user" and bool(texts) and all(p.synthetic for p in texts)
        kind = "meta" if synthetic else "message"
        for part_id in sorted(parts):
            part = parts[part_id]
            ptype = part.type
            if ptype == "text" and part.text is not None:
                if not part.ignored:
                    blocks.append(Block("text", part.text))
            elif ptype == "reasoning" and part.text is not None:
                blocks.append(Block("thinking", part.text))
            elif ptype == "compaction":
                blocks.append(Block("text", COMPACTION_PROMPT))
                kind = "meta"  # OpenCode's request for the summary, not the user's words
            elif ptype == "tool":
                call = part.call
                if call is None:
                    continue
                blocks.append(Block("tool_use", "", call.call_id, call.name, raw=call.input))
                if call.output is not None:
                    results.append(
                        Block("tool_result", call.output, call.call_id, is_error=call.is_error)
                    )
            elif ptype == "file":
                blocks.append(Block("image" if part.media else "other", raw=part.data))
            elif ptype not in _SCREEN_PARTS:
                self.state.unknown_type(f"part {ptype}")
        if row is None:
            timestamp = None
        else:
            timestamp = row.created
            if row.summary and role == "assistant":
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
        self._children: dict[str, SessionRow] = {}  # child session id → its row

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
        if row is not None and row.title is not None:
            child.description = row.title
        if session_id in self._task_calls:
            child.parent_tool_call_id = self._task_calls[session_id]

    entry = staticmethod(entry)

    def feed(self, record: Any, line: int) -> None:
        self.feed_entry(self.entry(record, line), line)  # (the class's: a test counts them)

    def feed_entry(self, entry: Entry, line: int) -> None:
        if type(entry) is PartRow:
            window = self._window(entry.session_id)
            window.part(entry, line)
            call = entry.call
            if window is self._main and call is not None and call.subagent is not None:
                self._task_calls[call.subagent] = call.call_id
                self._describe(call.subagent)
        elif type(entry) is MessageRow:
            self._window(entry.session_id).message(entry, line)
        elif type(entry) is SessionRow:
            self._session(entry)
        elif type(entry) is ExportDoc:  # a fork ctxtop wrote, or OpenCode's own export: its rows
            self.state.session_id = self.state.session_id or entry.session_id
            for row in entry.rows:
                self.feed_entry(row, line)
            if entry.broken is not None:
                self.state.skip(line, f"unexpected record shape ({entry.broken})")
        elif type(entry) is OddLine:
            self._odd(entry, line)

    def _odd(self, entry: OddLine, line: int) -> None:
        if entry.kind == "not-object":
            self.state.skip(line, "not a JSON object")
        elif entry.kind == "bad-row":
            self.state.skip(line, f"{entry.table} row without id or data")
        else:
            self.state.unknown_type(entry.table)

    def _session(self, row: SessionRow) -> None:
        state = self.state
        if row.id == state.session_id:
            if row.title is not None:
                state.title = row.title
            if row.directory is not None:
                state.cwd = row.directory
            if row.version is not None:
                state.agent_version = row.version
            state.touch(row.created)
        elif row.id is not None:
            self._children[row.id] = row
            self._describe(row.id)

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


__all__ = ["OpenCodeAdapter"]

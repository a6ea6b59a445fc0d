"""OpenCode: a fork is an export file (engine/agents/opencode/export.py) in ctxtop's own data
directory, never a write into OpenCode's database: the user imports it with OpenCode's own
``opencode import <file>`` (in the project's directory: import files the session under the
project it is run in) and resumes it with ``opencode --session <id>``.

The session's "bytes" are its rows as the reader takes them (one JSON line each,
engine/agents/opencode/rows.py); the fork is those rows of the main session under a new
session id with new message and part ids, a cleared result put in the tool part's
``state.output`` (what OpenCode sends; ``state.metadata``, what its screen shows, is kept as
it is), an input in ``state.input``. Sub-agents' sessions are not copied: the fork's task
results still hold what they answered.
"""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ctxtop.engine.agents.opencode.entries import (
    ExportDoc,
    MessageRow,
    PartRow,
    SessionRow,
    entry,
)
from ctxtop.engine.agents.opencode.export import AscendingIds, new_session_id
from ctxtop.engine.agents.opencode.rows import split_address
from ctxtop.engine.editing.turns import Scan, ScanBuilder
from ctxtop.engine.editing.writer import Writer, encoded
from ctxtop.engine.errors import InputError
from ctxtop.engine.paths import data_dir
from ctxtop.engine.sessions.fork_mark import fork_marker
from ctxtop.engine.sessions.json_lines import decode_line, opens_document


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """One message of the session: its row and its parts' rows, by part id."""

    row: MessageRow
    parts: dict[str, PartRow]

    @property
    def id(self) -> str:
        return self.row.id

    def copied(self) -> Copy:
        """The message as a fork writes it unchanged."""
        return Copy(self.id, self.row.data, [self.parts[key].data for key in sorted(self.parts)])

    def real_prompt(self) -> bool:
        """A user message with words of the user's (not OpenCode's synthetic text alone)."""
        texts = [part for part in self.parts.values() if part.type == "text"]
        return bool(texts) and not all(part.synthetic for part in texts)


@dataclass(frozen=True, slots=True)
class StoredSession:
    """The session read: its row and its messages in id order (a sub-agent's rows, in the same
    lines, are left out), from its entries (rows, or an export file's)."""

    row: SessionRow
    messages: list[StoredMessage]

    @classmethod
    def of(cls, path: Path, entries: list[Any], session_id: str) -> StoredSession:
        row: SessionRow | None = None
        messages: dict[str, StoredMessage] = {}
        parts: list[PartRow] = []
        exported = next((found for found in entries if type(found) is ExportDoc), None)
        if exported is not None:  # an export file (a fork ctxtop wrote): its rows
            if exported.broken is not None:  # (the reader skipped it: no fork of a part)
                raise InputError(str(path), "an export whose messages' parts are not lists")
            session_id = exported.session_id
            entries = list(exported.rows)
        for found in entries:
            if type(found) is SessionRow:
                row = found if found.id == session_id else row
            elif type(found) is MessageRow and found.session_id == session_id:
                messages[found.id] = StoredMessage(found, {})
            elif type(found) is PartRow and found.session_id == session_id:
                parts.append(found)
        for part in parts:
            owner = messages.get(part.message_id)
            if owner is not None:
                owner.parts[part.id] = part
        if row is None:
            row = _session_row({"opencode": "session", "id": session_id})
        return cls(row, [messages[key] for key in sorted(messages)])


class Copy(NamedTuple):
    """A message as a fork writes it: its id (renamed in the fork), its row's data and its
    parts' data in order."""

    id: str
    data: dict[str, Any]
    parts: list[dict[str, Any]]


def _document(path: Path, data: bytes) -> Any:
    """The JSON document ``data`` holds when it is one over many lines, else None (lines)."""
    first = data.split(b"\n", 1)[0]
    if not opens_document(first, decode_line(first)[1]):
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as error:
        raise InputError(str(path), f"invalid JSON document: {error}") from None


def _session_row(record: dict[str, Any]) -> SessionRow:
    found = entry(record, 0)
    assert type(found) is SessionRow
    return found


class OpenCodeWriter(Writer):
    agent = "opencode"
    resumable = True
    entry_of = staticmethod(entry)

    def records(self) -> list[Any]:
        """The session's lines, or an export printed over many lines (as ``opencode export``
        prints it) decoded whole: one value, as the reader takes it."""
        if self._records is None:
            document = _document(self.path, self.data)
            if document is not None:
                self._records = [document]
        return super().records()

    def stored(self) -> StoredSession:
        found = split_address(self.path)
        session_id = found[1] if found is not None else self.path.stem
        return StoredSession.of(self.path, self.entries(), session_id)

    def new_session_id(self) -> str:
        return new_session_id()

    def scan(self) -> Scan:
        found = ScanBuilder()
        for message in self.stored().messages:
            if message.row.role == "user" and message.real_prompt():
                found.new_turn()
            for key in sorted(message.parts):
                call = message.parts[key].call
                if call is None or found.use(call.call_id) is not None:
                    continue
                found.call(call.call_id, call.name, call.input, call.output)
        return found.scan()

    def render(self, results: dict[str, str], inputs: dict[str, Any], session_id: str) -> bytes:
        stored = self.stored()
        edited = [
            Copy(
                message.id,
                message.row.data,
                [_edited(message.parts[key], results, inputs) for key in sorted(message.parts)],
            )
            for message in stored.messages
        ]
        return self.export(stored.row, edited, session_id)

    @staticmethod
    def export(row: SessionRow, messages: list[Copy], session_id: str) -> bytes:
        """``messages`` as an export file of a session ``session_id`` (the session ``row``'s
        settings), every message and part under a new id, in order; a message whose parent
        is not among them answers the first message."""
        ids = AscendingIds()
        renamed = {message.id: ids.next("msg") for message in messages}
        out: list[dict[str, Any]] = []
        for message in messages:
            info = {**message.data, "id": renamed[message.id], "sessionID": session_id}
            if "parentID" in info:
                info["parentID"] = renamed.get(
                    info["parentID"], out[0]["info"]["id"] if out else None
                )
            parts = [
                {**part, "id": ids.next("prt"), "sessionID": session_id, "messageID": info["id"]}
                for part in message.parts
            ]
            out.append({"info": info, "parts": parts})
        return _file({"info": session_info(row, session_id), "messages": out})

    def mark(
        self,
        fork: bytes,
        context_tokens: int,
        session_id: str,
        usage: Mapping[str, tuple[int, int]] | None = None,
    ) -> bytes:
        """The mark on the document (the file's) and again in its last message, on a part's
        ``metadata`` (a text part's, else a tool's state's): import keeps only the session's
        and its messages' and parts' known fields, and a ``metadata`` whole, so the imported
        session still says its context is ctxtop's estimate until OpenCode's next request."""
        document = json.loads(fork)
        last = document["messages"][-1]["parts"] if document["messages"] else []
        holders = [p for p in last if p.get("type") == "text"] or [
            p["state"] for p in last if p.get("type") == "tool" and isinstance(p.get("state"), dict)
        ]
        if holders:
            metadata = holders[-1].get("metadata")
            metadata = metadata if isinstance(metadata, dict) else {}
            holders[-1]["metadata"] = {**metadata, **fork_marker(context_tokens, session_id)}
        return super().mark(_file(document), context_tokens, session_id, usage)

    def fork_name(self, session_id: str) -> str:
        return f"{session_id}.json"

    def fork_dir(self) -> Path:
        """ctxtop's own: OpenCode reads the fork from any path it is given."""
        return data_dir() / "forks"

    def resume_command(self, session_id: str, cwd: str | None) -> str | None:
        fork = shlex.quote(str(self.fork_dir() / self.fork_name(session_id)))
        command = f"opencode import {fork} && opencode --session {session_id}"
        return f"cd {shlex.quote(cwd)} && {command}" if cwd else command


def _file(document: dict[str, Any]) -> bytes:
    """An export document as the fork's bytes: one line (the fork mark goes on it)."""
    return encoded(document) + b"\n"


def _edited(part: PartRow, results: dict[str, str], inputs: dict[str, Any]) -> dict[str, Any]:
    """A tool part's data with its result and input replaced where the edit says (others as
    they are)."""
    call = part.call
    if call is None or (call.call_id not in results and call.call_id not in inputs):
        return part.data
    tool_state = dict(call.state)
    if call.call_id in inputs:
        tool_state["input"] = inputs[call.call_id]
    if call.call_id in results:
        tool_state["error" if call.is_error else "output"] = results[call.call_id]
    return {**part.data, "state": tool_state}


def session_info(row: SessionRow, session_id: str) -> dict[str, Any]:
    """The export's ``info`` for the session ``row`` under ``session_id``: what import requires
    (its project and directory are the importing one's) and the session's own agent, model
    and permissions, so the resumed fork runs as the session did."""
    return {
        "id": session_id,
        "slug": row.slug if row.slug is not None else "ctxtop-fork",
        "projectID": "global",
        "directory": row.directory if row.directory is not None else "",
        "title": row.title if row.title is not None else "ctxtop fork",
        "version": row.version if row.version is not None else "",
        "time": {"created": row.time_created, "updated": int(time.time() * 1000)},
        **row.settings,
    }

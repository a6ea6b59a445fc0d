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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxtop.engine.agents.opencode.export import (
    AscendingIds,
    StoredMessage,
    StoredSession,
    new_session_id,
    session_info,
)
from ctxtop.engine.agents.opencode.reader import tool_output
from ctxtop.engine.agents.opencode.rows import split_address
from ctxtop.engine.editing.turns import Scan, ScanBuilder
from ctxtop.engine.editing.writer import Writer, encoded
from ctxtop.engine.paths import data_dir
from ctxtop.engine.sessions.fork_mark import fork_marker


def _real_prompt(parts: dict[str, dict[str, Any]]) -> bool:
    """A user message with words of the user's (not OpenCode's synthetic text alone)."""
    texts = [part for part in parts.values() if part.get("type") == "text"]
    return bool(texts) and not all(part.get("synthetic") for part in texts)


class OpenCodeWriter(Writer):
    agent = "opencode"
    resumable = True

    def stored(self) -> StoredSession:
        found = split_address(self.path)
        session_id = found[1] if found is not None else self.path.stem
        return StoredSession.of(self.records(), session_id)

    def new_session_id(self) -> str:
        return new_session_id()

    def scan(self) -> Scan:
        found = ScanBuilder()
        for message in self.stored().messages:
            if message.data.get("role") == "user" and _real_prompt(message.parts):
                found.new_turn()
            for key in sorted(message.parts):
                part = message.parts[key]
                call_id, tool_state = part.get("callID"), part.get("state")
                if part.get("type") != "tool" or not isinstance(call_id, str):
                    continue
                if not isinstance(tool_state, dict) or found.use(call_id) is not None:
                    continue
                done = tool_state.get("status") in ("completed", "error")
                name = str(part.get("tool") or "unknown")
                result = tool_output(tool_state) if done else None
                found.call(call_id, name, tool_state.get("input"), result)
        return found.scan()

    def render(self, results: dict[str, str], inputs: dict[str, Any], session_id: str) -> bytes:
        stored = self.stored()
        edited = [
            StoredMessage(
                message.id,
                message.data,
                {key: _edited(part, results, inputs) for key, part in message.parts.items()},
            )
            for message in stored.messages
        ]
        return self.export(stored.row, edited, session_id)

    @staticmethod
    def export(row: dict[str, Any], messages: list[StoredMessage], session_id: str) -> bytes:
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
                {
                    **message.parts[key],
                    "id": ids.next("prt"),
                    "sessionID": session_id,
                    "messageID": info["id"],
                }
                for key in sorted(message.parts)
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


def _edited(
    part: dict[str, Any], results: dict[str, str], inputs: dict[str, Any]
) -> dict[str, Any]:
    """A tool part with its result and input replaced where the edit says (others as they are)."""
    call_id, tool_state = part.get("callID"), part.get("state")
    if part.get("type") != "tool" or not isinstance(tool_state, dict):
        return part
    if call_id not in results and call_id not in inputs:
        return part
    tool_state = dict(tool_state)
    if call_id in inputs:
        tool_state["input"] = inputs[str(call_id)]
    if call_id in results:
        text = results[str(call_id)]
        tool_state["error" if tool_state.get("status") == "error" else "output"] = text
    return {**part, "state": tool_state}

"""Claude Code: a new ``<project dir>/<uuid>.jsonl`` with ``sessionId`` rewritten on every line.

uuids and the ``parentUuid`` chain are copied unchanged (uuid dedup is per session, so reusing
them in a new session file is what ``--fork-session`` does too); only ``tool_result.content``
(and, when asked, long strings in ``tool_use.input``) change, and ``content-replacement``
entries of cleared results are dropped. Sidechain lines (inline sub-agent
turns of 1.0.x) are never edited.
"""

from __future__ import annotations

import json
import shlex
import uuid
from collections.abc import Mapping
from typing import Any

from ctxtop.engine.agents.claude_code import microcompact
from ctxtop.engine.agents.claude_code.entries import BAD_SHAPE, Entry, entry, is_subagent_log
from ctxtop.engine.compaction.source import shifted
from ctxtop.engine.editing.turns import Scan, ScanBuilder
from ctxtop.engine.editing.writer import Writer, encoded, jsonl_bytes, jsonl_records, text_id
from ctxtop.engine.sessions.entries import typed
from ctxtop.engine.sessions.fork_mark import USAGE_KEY, usage_is_ctxtops

# In a line whose usage ctxtop wrote (the fork's lines are written by ``dumps``): the lines
# without it are left as rendered, not decoded again.
_USAGE_MARK = f'"{USAGE_KEY}":'.encode()


def written_usage(prompt: int, output: int) -> dict[str, int]:
    """Usage as ctxtop writes it into a fork: all of the prompt uncached, nothing cached."""
    return {
        "input_tokens": prompt,
        "output_tokens": output,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _kept_replacements(replacements: list[Any], cleared: set[str]) -> list[Any]:
    """``<persisted-output>`` replacements less those of cleared results, so a resume does not
    put the preview back in place of the placeholder (entries name the call by its id)."""
    return [
        replacement
        for replacement in replacements
        if not (
            isinstance(replacement, dict)
            and cleared & {v for v in replacement.values() if isinstance(v, str)}
        )
    ]


def _forked_part(part: Any, results: dict[str, str], inputs: dict[str, Any]) -> Any:
    """A content part of the fork: a copy with the new result or input, or ``part`` itself."""
    if not isinstance(part, dict):
        return part
    if part.get("type") == "tool_result" and text_id(part.get("tool_use_id")) in results:
        return {**part, "content": results[str(part["tool_use_id"])]}
    if part.get("type") == "tool_use" and text_id(part.get("id")) in inputs:
        return {**part, "input": inputs[str(part["id"])]}
    return part


# The keys a new line copies from the one it follows (where and by what it was written).
_ENVELOPE = ("isSidechain", "cwd", "version", "gitBranch", "userType", "entrypoint", "sessionId")


def _lines(entries: list[Any]) -> list[Entry]:
    """The session's lines that are JSON (a blank or bad line stays bytes in ``entries``)."""
    return [line for line in entries if isinstance(line, Entry)]


def _others(lines: list[Entry]) -> bool:
    """Whether the sidechain lines are another window's (a sub-agent's, skipped): not when the
    file is a sub-agent's own log, as the reader takes it."""
    return not is_subagent_log(lines)


class ClaudeCodeWriter(Writer):
    agent = "claude-code"
    resumable = True
    supports_restore = True
    entry_of = staticmethod(entry)

    def scan(self) -> Scan:
        found = ScanBuilder()
        lines = _lines(self.entries())
        others = _others(lines)
        for line in lines:
            if others and line.sidechain:
                continue
            for call_id in line.cleared:
                cleared = found.use(call_id)
                if cleared is not None and cleared.result is not None:
                    cleared.result = microcompact.CLEARED_RESULT  # what the model sees
            if line.message is None:
                continue
            if line.type == "user":
                if line.starts_turn():
                    found.new_turn()
                    continue
                for result in line.results():
                    use = found.use(result.call_id)
                    if use is not None:
                        use.result = result.edited_text
            elif line.type == "assistant":
                for call in line.calls():
                    found.call(call.call_id, call.name, call.input)
        return found.scan()

    def render(self, results: dict[str, str], inputs: dict[str, Any], session_id: str) -> bytes:
        entries = self.entries()
        others = _others(_lines(entries))
        # Results the agent cleared (microcompaction) go in cleared: what the model sees of
        # them, whichever version resumes the fork.
        cleared = dict.fromkeys(
            (
                call_id
                for line in entries
                if isinstance(line, Entry) and not (others and line.sidechain)
                for call_id in line.cleared
            ),
            microcompact.CLEARED_RESULT,
        )
        results = {**cleared, **results}
        return jsonl_bytes(
            [
                line
                if not isinstance(line, Entry)
                else line.record
                if line.kind == BAD_SHAPE
                else self._forked(
                    line.record, results, inputs, session_id, others and line.sidechain
                )
                for line in entries
            ]
        )

    @staticmethod
    def _forked(
        record: dict[str, Any],
        results: dict[str, str],
        inputs: dict[str, Any],
        session_id: str,
        sidechain: bool,
    ) -> dict[str, Any]:
        """The fork's copy of a line (the session's records are shared, never changed)."""
        forked = dict(record)
        if "sessionId" in forked:
            forked["sessionId"] = session_id
        replacements = forked.get("replacements")
        if forked.get("type") == "content-replacement" and isinstance(replacements, list):
            forked["replacements"] = _kept_replacements(replacements, set(results))
        message = forked.get("message")
        if sidechain or not isinstance(message, dict):
            return forked
        content = message.get("content")
        if isinstance(content, list):
            parts = [_forked_part(part, results, inputs) for part in content]
            if any(new is not old for new, old in zip(parts, content, strict=True)):
                forked["message"] = {**message, "content": parts}
        return forked

    def mark(
        self,
        fork: bytes,
        context_tokens: int,
        session_id: str,
        usage: Mapping[str, tuple[int, int]] | None = None,
    ) -> bytes:
        """Also the usage ctxtop wrote (``ctxtopUsage``) as ``usage`` gives it by uuid: what
        Claude Code counts its context from on resume adds up to ctxtop's estimate."""
        if usage:
            lines = fork.split(b"\n")
            for index, raw in enumerate(lines):
                if _USAGE_MARK not in raw:
                    continue  # no usage of ctxtop's: the line as rendered
                try:
                    record = json.loads(raw.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                    continue
                if not isinstance(record, dict) or not usage_is_ctxtops(record):
                    continue
                figures = usage.get(str(record.get("uuid")))
                message = record.get("message")
                if figures is not None and isinstance(message, dict):
                    prompt, output = figures
                    message["usage"] = written_usage(prompt, output)
                    lines[index] = encoded(record)
            fork = b"\n".join(lines)
        return super().mark(fork, context_tokens, session_id)

    def with_message(self, fork: bytes, line: int, text: str) -> bytes:
        """The message goes into the chain right after the compaction's summary (after the
        boundary line itself when it has none, as a microcompaction): what hung off it hangs
        off the message."""
        lines = typed(jsonl_records(self.path, fork), entry)
        index = line - 1
        anchor = lines[index]
        if not isinstance(anchor, Entry) or anchor.uuid is None:
            raise ValueError(f"line {line} is no compaction of the chain")
        for later, found in enumerate(lines[index + 1 :], index + 1):
            if not isinstance(found, Entry):
                continue
            if found.kind == "compaction":
                break  # the next compaction's: this one wrote no summary
            if found.compact_summary:  # (2.1.332 writes attachments before it)
                index, anchor = later, found
                break
        new_id = str(uuid.uuid4())
        records = [
            found
            if not isinstance(found, Entry)
            else dict(found.record, parentUuid=new_id)
            if found.parent == anchor.uuid
            else found.record
            for found in lines
        ]
        message = {
            "parentUuid": anchor.uuid,
            **{key: anchor.record[key] for key in _ENVELOPE if key in anchor.record},
            "type": "user",
            "message": {"role": "user", "content": text},
            "uuid": new_id,
            "timestamp": shifted(anchor.timestamp, 1),
        }
        records.insert(index + 1, message)
        return jsonl_bytes(records)

    def fork_name(self, session_id: str) -> str:
        return f"{session_id}.jsonl"

    def resume_command(self, session_id: str, cwd: str | None) -> str | None:
        command = f"claude --resume {session_id}"
        return f"cd {shlex.quote(cwd)} && {command}" if cwd else command

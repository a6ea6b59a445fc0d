"""A cold read of a Claude Code session: the history before the last compaction, for its figures.

Lines before the session's last ``compact_boundary`` are no longer in the context: the reader
needs from them only what the report and the sessions table show (each response's usage, once
per message id; tool calls' names and their results' sizes; compactions; timestamps; process
starts; sub-agent prompts). ``plan`` finds that boundary by looking back from the end of the
file; the adapter then decodes each history line into the lean ``Line`` below (content it only
measures stays undecoded ``msgspec.Raw``, text it never looks at is skipped by the decoder), and
builds no messages. Lines from the boundary on, the messages the compaction preserved, and any
line of a shape the lean reading does not take go through the full path.

The figures are the full path's: ``History.seen`` notes every history line's uuid (a hash), so
that a later line hanging off the history (a rewind across the compaction) asks for a full read
(``Adapter.needs_full_read``), as does a log whose context figures would need the history's
context (no response after the boundary; see ``ClaudeCodeAdapter.history_read``).
"""

from __future__ import annotations

from sys import intern
from typing import Annotated, Any

import msgspec

from ctxtop.engine.agents.claude_code.entries import opens_with_prompt, result_text
from ctxtop.engine.agents.claude_code.subagent import SUBAGENT_TOOLS
from ctxtop.engine.sessions.adapter import MAX_TOKENS
from ctxtop.engine.sessions.columns import Hashes
from ctxtop.engine.sessions.fork_mark import USAGE_KEY
from ctxtop.engine.sessions.model import Usage
from ctxtop.engine.sessions.tail import ByteSource

BOUNDARY = b'"compact_boundary"'
ASSISTANT = b'"type":"assistant"'


Tokens = Annotated[int, msgspec.Meta(ge=0, le=MAX_TOKENS)]


class Details(msgspec.Struct):
    thinking_tokens: Tokens = 0


class CacheCreation(msgspec.Struct):
    ephemeral_1h_input_tokens: Tokens = 0


class UsageLine(msgspec.Struct):
    """Anthropic usage with whole figures in range (any other value: the full path's rule);
    a figure not logged is unset (a usage without any is no request)."""

    input_tokens: Tokens | msgspec.UnsetType = msgspec.UNSET
    output_tokens: Tokens | msgspec.UnsetType = msgspec.UNSET
    cache_read_input_tokens: Tokens | msgspec.UnsetType = msgspec.UNSET
    cache_creation_input_tokens: Tokens | msgspec.UnsetType = msgspec.UNSET
    output_tokens_details: Details | None = None
    cache_creation: CacheCreation | None = None

    def logged(self) -> bool:
        """Whether one token figure was logged (``"usage": {}`` logs none)."""
        return not (
            self.input_tokens is msgspec.UNSET
            and self.output_tokens is msgspec.UNSET
            and self.cache_read_input_tokens is msgspec.UNSET
            and self.cache_creation_input_tokens is msgspec.UNSET
        )

    def normalised(self) -> Usage:
        details = self.output_tokens_details
        creation = self.cache_creation
        return Usage(
            self.input_tokens or 0,
            self.output_tokens or 0,
            self.cache_read_input_tokens or 0,
            self.cache_creation_input_tokens or 0,
            details.thinking_tokens if details is not None else 0,
            creation.ephemeral_1h_input_tokens if creation is not None else 0,
        )


class Block(msgspec.Struct):
    """A content block: what a tool call and result carry; text is measured or skipped."""

    type: Any = None
    id: Any = msgspec.UNSET
    name: Any = msgspec.UNSET
    input: msgspec.Raw = msgspec.Raw()
    tool_use_id: Any = msgspec.UNSET
    content: msgspec.Raw = msgspec.Raw()
    is_error: Any = None
    text: msgspec.Raw = msgspec.Raw()


class Message(msgspec.Struct):
    content: str | list[Block] | None = None
    model: str | None = None
    id: Any = None
    usage: UsageLine | None = None


class AttachmentHead(msgspec.Struct):
    type: Any = None  # (a ``prompt_snapshot``: prompt_log.py)


class Line(msgspec.Struct):
    """A history line: the fields the figures need (the rest is skipped unread). A field the
    full path takes only as a string is typed so: any other value fails the lean decoding, and
    the line goes the full path (which ignores or reports it)."""

    type: str | None = None
    uuid: str | None = None
    timestamp: str | None = None
    isSidechain: Any = None
    isMeta: Any = None
    isCompactSummary: Any = None
    isApiErrorMessage: Any = None
    requestId: Any = None
    requestedModel: Any = None
    requestSessionId: Any = None
    version: str | None = None
    sessionId: str | None = None
    cwd: str | None = None
    subtype: Any = None
    compactMetadata: Any = None
    ctxtopCompaction: Any = None
    usage_mark: Any = msgspec.field(default=msgspec.UNSET, name=USAGE_KEY)  # usage ctxtop wrote
    message: Message | None = None
    attachment: AttachmentHead | None = None


decode_line = msgspec.json.Decoder(Line).decode
decode_value = msgspec.json.Decoder().decode


class Content:
    """What a history message's content gives the figures."""

    __slots__ = ("opens_turn", "spawns", "tools")

    def __init__(self) -> None:
        # (call id, tool name, None) for a call, (call id, "", result text, error) for a result
        self.tools: list[tuple[str, str, str | None, bool]] = []
        self.spawns: list[tuple[str, str]] = []  # (call id, prompt) of a sub-agent call
        self.opens_turn = False  # what the line does to the turn (``ProcessStarts``)


def content_of(message: Message, kind: str, line: Line) -> Content | None:
    """The tool calls, results and sub-agent prompts of a user or assistant message, in block
    order as the full path records them (None: a shape left to the full path)."""
    found = Content()
    content = message.content
    uses = results = False
    first_text: msgspec.Raw | None = None
    if isinstance(content, list):
        try:
            for block in content:
                kind_of = block.type
                if kind_of == "tool_use":
                    uses = True
                    name = block.name
                    if name is msgspec.UNSET:
                        name = ""
                    elif not isinstance(name, str):
                        return None
                    call_id = "" if block.id is msgspec.UNSET else str(block.id)
                    if call_id:  # (names interned: a few tools called thousands of times)
                        found.tools.append((call_id, intern(name or "unknown"), None, False))
                    if kind == "assistant" and name in SUBAGENT_TOOLS and block.input:
                        value = decode_value(block.input)
                        prompt = value.get("prompt") if isinstance(value, dict) else None
                        if isinstance(prompt, str):
                            spawned = "None" if block.id is msgspec.UNSET else str(block.id)
                            found.spawns.append((spawned, prompt))
                elif kind_of == "tool_result":
                    results = True
                    value = decode_value(block.content) if block.content else None
                    call_id = "" if block.tool_use_id is msgspec.UNSET else str(block.tool_use_id)
                    if call_id:
                        found.tools.append((call_id, "", result_text(value), bool(block.is_error)))
                elif kind_of == "text" and first_text is None:
                    first_text = block.text
        except (msgspec.DecodeError, ValueError, RecursionError):
            return None
    if kind == "assistant":
        found.opens_turn = uses
    elif not line.isMeta and not line.isCompactSummary:
        if results:
            found.opens_turn = True
        else:
            text = content if isinstance(content, str) else None
            if first_text:
                text = decode_value(first_text)
            found.opens_turn = opens_with_prompt(text)
    return found


class History:
    """The planned history of one cold read, and what was seen of it."""

    def __init__(self, split_uuid: str | None = None, preserved: set[str] | None = None) -> None:
        self.split_uuid = split_uuid  # the boundary the full path starts at (None: no history)
        self.preserved = preserved or set()  # history lines the compaction kept in the context
        self.active = split_uuid is not None  # lines are history until the split boundary
        self.compactions_released = 0  # compactions after which the chain was let go of
        self.split_line = 0
        self.compactions_at_split = 0
        self.check_boundary = True  # the first boundary after the split is still to check
        self.seen = Hashes()  # hashes of the history lines' uuids
        self.lean_lines = 0  # lines taken by the lean reading (a measure of the work saved)


def _boundary(raw: bytes) -> tuple[str, set[str]] | None:
    """The uuid and preserved messages of a main-chain compaction boundary line."""
    try:
        record = decode_value(raw)
    except (msgspec.DecodeError, ValueError, RecursionError):
        return None
    if (
        not isinstance(record, dict)
        or record.get("type") != "system"
        or record.get("subtype") != "compact_boundary"
        or record.get("isSidechain")
        or not isinstance(record.get("uuid"), str)
    ):
        return None
    meta = record.get("compactMetadata")
    preserved = meta.get("preservedMessages") if isinstance(meta, dict) else None
    uuids = preserved.get("uuids") if isinstance(preserved, dict) else None
    kept = {uuid for uuid in uuids if isinstance(uuid, str)} if isinstance(uuids, list) else set()
    return record["uuid"], kept


def plan(source: ByteSource, within: int | None = None) -> History | None:
    """The history of the file in ``source``: the lines before its last compaction boundary
    that a response follows (before the next boundary: a compaction with no request after it
    leaves the context before it to the figures, so the full path starts a window earlier).
    No such boundary: no history, all lines take the full path. ``within``: look only that
    many bytes back from the end; None when a bigger file has no such boundary there."""
    later = source.size
    stop = 0 if within is None else max(source.size - within, 0)
    for start, raw in source.lines_back(BOUNDARY, stop):
        found = _boundary(raw)
        if found is None:
            continue
        if source.contains(ASSISTANT, start + len(raw), later):
            return History(*found)
        later = start
    return History() if stop == 0 else None

"""Claude Code's typed record stream: what each decoded line of a transcript is to the agent
(../shared/docs/agent-log-formats.md §1), made once by ``entry`` for the session reader, the
fork writer and the compaction source (engine/sessions/entries.py).

An ``Entry`` keeps the line's value as written (``record``: a fork copies every field of it)
beside what the three read of it, interpreted here: the cheap facts every line needs are fields
(made on the reader's hot path), the rest are properties and methods computed when asked.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from ctxtop.engine.agents.claude_code import prompt_log
from ctxtop.engine.agents.claude_code.subagent import SUBAGENT_TOOLS
from ctxtop.engine.sessions.adapter import MAX_TOKENS, token_count
from ctxtop.engine.sessions.fork_mark import COMPACTION_KEY, usage_is_ctxtops
from ctxtop.engine.sessions.model import Block, Usage

Kind = Literal[
    "message",  # a user or assistant line (``type`` says which)
    "attachment",  # context the CLI attached (a file, a listing, the environment...)
    "snapshot",  # a ``prompt_snapshot`` attachment: the prompt sent, no message
    "compaction",  # a ``compact_boundary`` system line: a new root of the chain
    "microcompaction",  # a ``microcompact_boundary`` system line: results cleared in place
    "system",  # another system line (not sent to the model)
    "progress",  # a link of the chain, no message
    "request",  # an ``api-request`` or ``api-request-shape`` record (prompt_log.py)
    "metadata",  # any other line with a ``type`` (titles, queue operations, replacements...)
    "untyped",  # an object without a string ``type``
    "bad-shape",  # not a JSON object
]
BAD_SHAPE: Kind = "bad-shape"

# The conversation's lines: the first of them tells whether the file is a sub-agent's own log.
MESSAGE_TYPES = frozenset({"user", "assistant", "attachment"})
_MESSAGE_KINDS = ("message", "attachment", "snapshot")  # (their kinds: any value compares)
MICROCOMPACT = "microcompact_boundary"
# The kinds of the conversation's lines (user, assistant, attachment, system).
CONVERSATION_KINDS = frozenset(
    {"message", "attachment", "snapshot", "system", "compaction", "microcompaction"}
)
# Attachments that carry standing context (rules, memory, tool and skill listings, the
# environment): Claude Code itself re-attaches these after a compaction.
STANDING_ATTACHMENTS = frozenset(
    {
        "skill_listing",
        "agent_listing_delta",
        "deferred_tools_delta",
        "mcp_instructions_delta",
        "environment",
        "model",
    }
)
_STANDING_WORDS = ("memory", "claude_md", "claudemd", "rules", "instructions")
# User lines that are the CLI's own, not the user's request.
NOT_REQUESTS = ("<local-command-", "<command-name>", "<task-notification>", "<system-reminder>")
_TITLE_KEYS = {"custom-title": "customTitle", "ai-title": "aiTitle"}
_FILE_KEYS = ("filename", "filePath", "file_path", "path")


def is_request_text(text: str) -> bool:
    """A user line's text that the user typed (not the CLI's command echo or notification)."""
    stripped = text.lstrip()
    return bool(stripped) and not stripped.startswith(NOT_REQUESTS)


def opens_with_prompt(text: Any) -> bool:
    """Text the user typed, as the turn's bookkeeping tells it (local commands, their output
    and notifications come tagged); the lean history reading uses the same rule."""
    return isinstance(text, str) and not text.lstrip().startswith("<")


# The token counts of an Anthropic usage object (a usage with none of them is no request).
USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


def usage_from(raw: Any) -> Usage:
    """Anthropic usage → ``Usage`` (``input_tokens`` there is already uncached input); the
    lean history reading decodes a usage of whole figures in range into the same
    (``history.UsageLine.normalised``)."""
    if not isinstance(raw, dict):
        return Usage()
    details = raw.get("output_tokens_details")
    thinking = details.get("thinking_tokens", 0) if isinstance(details, dict) else 0
    creation = raw.get("cache_creation")
    long_lived = creation.get("ephemeral_1h_input_tokens") if isinstance(creation, dict) else 0
    return Usage(  # (in field order: input, output, cache read, cache write, reasoning, 1h)
        _tokens(raw.get("input_tokens")),
        _tokens(raw.get("output_tokens")),
        _tokens(raw.get("cache_read_input_tokens")),
        _tokens(raw.get("cache_creation_input_tokens")),
        _tokens(thinking),
        _tokens(long_lived),
    )


def _tokens(value: Any) -> int:
    """``token_count(value) or 0``, the common case (a whole number in range) first: five of
    them for every response line of a long log."""
    if type(value) is int and 0 <= value <= MAX_TOKENS:
        return value
    return token_count(value) or 0


def copied(request_session: Any, session: Any) -> bool:
    """A response line another session's request wrote: ``--fork-session`` copies the parent's
    context into the new file, the messages a compaction preserved with their usage zeroed
    [OBS 2.1.330 76c4d859 line 8]. Such a copy with no usage is no request of this file (taken
    for one, it made the first request on the context 0 tokens: no system prompt, the forecast
    a jump from 0 to the whole context)."""
    return isinstance(request_session, str) and request_session != session


def result_text(content: Any) -> str:
    """The text of a tool_result ``content`` (a string or a list of blocks) as the session's
    model holds it (images as "[image]"; the lean history reading uses it too)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict):
                if block.get("type") == "text":
                    parts.append(str(block.get("text", "")))
                elif block.get("type") == "image":
                    parts.append("[image]")
            elif isinstance(block, str):
                parts.append(block)
        return "\n".join(parts)
    return "" if content is None else json.dumps(content)


def summarised_text(content: Any) -> str:
    """The text parts of a message's or a result's content, as a compaction summarises them
    (its shared rule; imported here only when asked: the reader never asks)."""
    from ctxtop.engine.compaction.source import text_of

    return text_of(content)


def blocks_of(content: Any) -> list[Block]:
    """What the model sees of a message's content, as the session's blocks."""
    if isinstance(content, str):
        return [Block("text", content)]
    blocks: list[Block] = []
    if not isinstance(content, list):
        return blocks
    for raw in content:
        if not isinstance(raw, dict):
            continue
        kind = raw.get("type")
        if kind == "text":
            blocks.append(Block("text", str(raw.get("text", ""))))
        elif kind in ("thinking", "redacted_thinking"):
            blocks.append(Block("thinking", str(raw.get("thinking") or raw.get("data") or "")))
        elif kind == "tool_use":
            tool_id, name = str(raw.get("id", "")), str(raw.get("name", ""))
            blocks.append(Block("tool_use", "", tool_id, name, raw=raw.get("input", {})))
        elif kind == "tool_result":
            blocks.append(
                Block(
                    "tool_result",
                    result_text(raw.get("content")),
                    str(raw.get("tool_use_id", "")),
                    is_error=bool(raw.get("is_error")),
                )
            )
        elif kind in ("image", "document"):
            blocks.append(Block("image"))
        else:
            blocks.append(Block("other", raw=raw))
    return blocks


def _attachment_blocks(record: dict[str, Any]) -> list[Block]:
    """What the model sees of an attachment: its ``rendered`` texts (2.1.33x), else its JSON."""
    rendered = record.get("rendered")
    if not isinstance(rendered, list):
        return [Block("other", raw=record.get("attachment"))]
    blocks: list[Block] = []
    for part in rendered:
        content = part.get("content") if isinstance(part, dict) else part
        if isinstance(content, str):
            blocks.append(Block("text", content))
        else:
            blocks.extend(blocks_of(content))
    return blocks


def _ids(value: Any) -> tuple[str, ...]:
    """The ids of a list, each once, in the log's order."""
    if not isinstance(value, list):
        return ()
    return tuple(dict.fromkeys(item for item in value if isinstance(item, str)))


@dataclass(frozen=True, slots=True)
class Call:
    """A ``tool_use`` part of an assistant line, as the fork writer and the compaction source
    name it (a missing id or name reads "None")."""

    call_id: str
    name: str
    input: Any


@dataclass(frozen=True, slots=True)
class Result:
    """A ``tool_result`` part of a user line."""

    call_id: str
    content: Any  # as written
    is_error: bool

    @property
    def edited_text(self) -> str:
        """The text the edit screen shows and replaces (a non-list value as ``str``): the edit's
        shared rule, imported only when asked (a report or the statusline never edits)."""
        from ctxtop.engine.editing.turns import result_text as edited_result_text

        return edited_result_text(self.content)

    @property
    def summarised_text(self) -> str:
        """The text a compaction summarises (its text parts only)."""
        return summarised_text(self.content)


class Entry(msgspec.Struct, frozen=True, gc=False):
    """One line of a Claude Code transcript (``entry``'s): ``record`` as written, and what it is."""

    record: Any
    kind: Kind
    type: Any = None  # the line's ``type`` as written
    uuid: str | None = None
    parent: Any = None  # ``parentUuid`` as written (None: a root)
    timestamp: str | None = None
    sidechain: bool = False  # a sub-agent's line (1.0.x inline, or a sub-agent's own file)
    subtype: Any = None  # a system line's
    session_id: str | None = None
    # The fields below are those of a line of the conversation (user, assistant, attachment,
    # system): None or False for any other line.
    version: str | None = None
    cwd: str | None = None
    message: dict[str, Any] | None = None  # a user or assistant line's API message
    blocks: list[Block] | None = None  # what the model sees of a message or an attachment
    meta: bool = False  # ``isMeta``: the CLI's own user line
    compact_summary: bool = False  # ``isCompactSummary``: a compaction's summary
    attachment: Any = None  # an attachment line's ``attachment`` as written
    # An assistant line's response: its ``model`` and ``usage`` as written, the response it is
    # a block of (§1.5: one line per content block), whether it is an error the CLI logged
    # (``isApiErrorMessage``), whether its usage is ctxtop's (written into a fork: no request
    # made), the model the user asked for (``requestedModel``).
    model: Any = None
    usage: Any = None
    response_key: str | None = None
    api_error: bool = False
    usage_is_ctxtops: bool = False
    requested_model: Any = None

    def _get(self, key: str) -> Any:
        """The line's field ``key`` as written (None: absent, or the line is no object)."""
        record = self.record
        return record.get(key) if type(record) is dict else None

    # -- what a line is --------------------------------------------------------------------

    @property
    def content(self) -> Any:
        """A message's ``content`` as written (None: no message)."""
        message = self.message
        return message.get("content") if message is not None else None

    @property
    def parts(self) -> list[Any]:
        """A message's content parts (none when its content is a string)."""
        content = self.content
        return content if isinstance(content, list) else []

    def starts_turn(self) -> bool:
        """A user line that starts a turn of the edit screen: the user's words or image, not
        tool results nor the CLI's own (meta) lines nor a compaction's summary."""
        if self.type != "user" or self.message is None or self.meta or self.compact_summary:
            return False
        content = self.content
        if isinstance(content, str):
            return True
        kinds = {str(part.get("type")) for part in self.parts if isinstance(part, dict)}
        return "tool_result" not in kinds and bool(kinds & {"text", "image"})

    def opens_turn(self) -> bool:
        """Whether the model owes a response after this line (a process's turn, process.py):
        an assistant line that calls tools; a user line with results or a typed prompt."""
        if self.type == "assistant":
            return any(isinstance(p, dict) and p.get("type") == "tool_use" for p in self.parts)
        if self.type != "user" or self.meta or self.compact_summary:
            return False
        parts = self.parts
        if any(isinstance(p, dict) and p.get("type") == "tool_result" for p in parts):
            return True
        content = self.content
        if isinstance(content, list):
            texts = [
                p.get("text") for p in parts if isinstance(p, dict) and p.get("type") == "text"
            ]
            content = texts[0] if texts else None
        return opens_with_prompt(content)

    def is_request(self) -> bool:
        """A user line that is the user's request to the model, as a compaction keeps it: not
        the CLI's own (meta) line, a compaction's summary, tool results, nor a command's echo
        or a notification (which ``starts_turn`` does count)."""
        if self.type != "user" or self.message is None or self.meta or self.compact_summary:
            return False
        return not self.results() and is_request_text(self.text)

    @property
    def prompt(self) -> str | None:
        """A user line's prompt when it is plain text (a sub-agent's first prompt is)."""
        content = self.content
        return content if self.type == "user" and isinstance(content, str) else None

    @property
    def text(self) -> str:
        """A message's text parts, as a compaction summarises them."""
        return summarised_text(self.content)

    @property
    def images(self) -> int:
        """The images a message's content holds (top level)."""
        return sum(1 for p in self.parts if isinstance(p, dict) and p.get("type") == "image")

    def calls(self) -> list[Call]:
        """An assistant line's tool calls, in order."""
        if self.type != "assistant":
            return []
        return [
            Call(str(p.get("id")), str(p.get("name")), p.get("input"))
            for p in self.parts
            if isinstance(p, dict) and p.get("type") == "tool_use"
        ]

    def results(self) -> list[Result]:
        """A user line's tool results, in order."""
        if self.type != "user":
            return []
        return [
            Result(str(p.get("tool_use_id")), p.get("content"), bool(p.get("is_error")))
            for p in self.parts
            if isinstance(p, dict) and p.get("type") == "tool_result"
        ]

    def spawns(self) -> list[tuple[str, str]]:
        """(call id, prompt) of an assistant line's sub-agent calls (``Task``, ``Agent``)."""
        if self.type != "assistant":
            return []
        return [
            (str(p.get("id")), p["input"]["prompt"])
            for p in self.parts
            if isinstance(p, dict)
            and p.get("type") == "tool_use"
            and p.get("name") in SUBAGENT_TOOLS
            and isinstance(p.get("input"), dict)
            and isinstance(p["input"].get("prompt"), str)
        ]

    # -- a response ------------------------------------------------------------------------

    @property
    def response_id(self) -> str | None:
        """The message id an assistant line names (None when it names none)."""
        found = self.message.get("id") if self.message is not None else None
        return found if isinstance(found, str) else None

    @property
    def copied(self) -> bool:
        """A response line another session's request wrote (``copied``)."""
        return copied(self._get("requestSessionId"), self._get("sessionId"))

    # -- compactions -----------------------------------------------------------------------

    @property
    def compact_metadata(self) -> dict[str, Any]:
        """A compaction's ``compactMetadata`` ({} when absent)."""
        meta = self._get("compactMetadata") if self.kind == "compaction" else None
        return meta if isinstance(meta, dict) else {}

    @property
    def ctxtop_mark(self) -> Any:
        """A compaction's ``ctxtopCompaction`` (ctxtop wrote it into its fork)."""
        return self._get(COMPACTION_KEY) if self.kind == "compaction" else None

    @property
    def preserved(self) -> tuple[str, list[str]] | None:
        """The summary a compaction kept earlier lines after, and their uuids (2.1.x)."""
        preserved = self.compact_metadata.get("preservedMessages")
        if not isinstance(preserved, dict) or not isinstance(preserved.get("anchorUuid"), str):
            return None
        return preserved["anchorUuid"], [
            u for u in preserved.get("uuids") or [] if isinstance(u, str)
        ]

    @property
    def microcompact_metadata(self) -> dict[str, Any]:
        """A microcompaction's metadata (some files carry a legacy ``compactMetadata`` beside
        ``microcompactMetadata``: the latter wins)."""
        if self.kind != "microcompaction":
            return {}
        for key in ("microcompactMetadata", "compactMetadata"):
            meta = self._get(key)
            if isinstance(meta, dict):
                return meta
        return {}

    @property
    def cleared(self) -> tuple[str, ...]:
        """The tool results a microcompaction clears (none for any other line)."""
        return _ids(self.microcompact_metadata.get("compactedToolIds"))

    @property
    def cleared_attachments(self) -> tuple[str, ...]:
        return _ids(self.microcompact_metadata.get("clearedAttachmentUUIDs"))

    # -- other lines -----------------------------------------------------------------------

    @property
    def title(self) -> str | None:
        """A title line's title (``custom-title``, ``ai-title``; a 1.0.x ``summary``)."""
        kind = self.type
        if kind == "summary":
            key = "summary"
        elif isinstance(kind, str) and kind in _TITLE_KEYS:
            key = _TITLE_KEYS[kind]
        else:
            return None
        title = self._get(key)
        return title if isinstance(title, str) else None

    @property
    def attachment_type(self) -> Any:
        attachment = self.attachment
        return attachment.get("type") if isinstance(attachment, dict) else None

    @property
    def attachment_label(self) -> str:
        """What an attachment is called (its type, else "attachment")."""
        return str(self.attachment_type or "attachment")

    @property
    def standing(self) -> bool:
        """An attachment of standing context (rules, memory, listings, the environment)."""
        label = self.attachment_label
        lowered = label.lower()
        return label in STANDING_ATTACHMENTS or any(word in lowered for word in _STANDING_WORDS)

    @property
    def attached_file(self) -> str | None:
        """The file an attachment names."""
        attachment = self.attachment
        if not isinstance(attachment, dict):
            return None
        for key in _FILE_KEYS:
            if isinstance(attachment.get(key), str):
                return str(attachment[key])
        return None

    @property
    def agent_id(self) -> str | None:
        """A sub-agent line's ``agentId``."""
        found = self._get("agentId")
        return found if isinstance(found, str) else None

    @property
    def replacements(self) -> list[Any] | None:
        """A ``content-replacement`` line's replacements (None for any other line)."""
        if self.type != "content-replacement":
            return None
        found = self._get("replacements")
        return found if isinstance(found, list) else None

    @property
    def betas(self) -> list[Any]:
        """The betas an ``api-request`` line's request asked for."""
        params = self._get("params") if self.type == prompt_log.REQUEST else None
        betas = params.get("betas") if isinstance(params, dict) else None
        return betas if isinstance(betas, list) else []

    @property
    def queue(self) -> tuple[Any, Any]:
        """A ``queue-operation`` line's operation and content."""
        if self.type != "queue-operation":
            return None, None
        return self._get("operation"), self._get("content")


def _bad(record: Any) -> Entry:
    return Entry(record, BAD_SHAPE)


_SYSTEM_KINDS: dict[Any, Kind] = {"compact_boundary": "compaction", MICROCOMPACT: "microcompaction"}


def entry(record: Any, line: int) -> Entry:
    """What line ``line``'s decoded value ``record`` (any JSON value) is to Claude Code."""
    if type(record) is not dict:
        return _bad(record)
    get = record.get
    kind_of = get("type")
    uuid = get("uuid")
    if type(uuid) is not str:
        uuid = None
    parent = get("parentUuid")
    timestamp = get("timestamp")
    if type(timestamp) is not str:
        timestamp = None
    sidechain = bool(get("isSidechain"))
    session = get("sessionId")
    if type(session) is not str:
        session = None
    kind: Kind
    message = blocks = attachment = subtype = model = usage = key = requested = None
    api_error = ctxtop_usage = meta = summary = False
    if kind_of == "assistant" or kind_of == "user":
        kind = "message"
        meta, summary = bool(get("isMeta")), bool(get("isCompactSummary"))
        message = get("message")
        if type(message) is not dict:
            message = None
        else:
            blocks = blocks_of(message.get("content"))
            if kind_of == "assistant":
                model, usage = message.get("model"), message.get("usage")
                key = message.get("id") or get("requestId") or uuid
                if type(key) is not str:
                    key = str(key)
                api_error = bool(get("isApiErrorMessage"))
                ctxtop_usage = usage_is_ctxtops(record)
                requested = get("requestedModel")
    elif kind_of == "attachment":
        attachment = get("attachment")
        if type(attachment) is dict and attachment.get("type") == prompt_log.SNAPSHOT:
            kind = "snapshot"
        else:
            kind = "attachment"
            blocks = _attachment_blocks(record)
    elif kind_of == "system":
        subtype = get("subtype")
        kind = _SYSTEM_KINDS.get(subtype, "system") if isinstance(subtype, str) else "system"
    else:  # (no line of the conversation: what these are needs none of the fields below)
        if kind_of == "progress":
            kind = "progress"
        elif kind_of == prompt_log.REQUEST or kind_of == prompt_log.SHAPE:
            kind = "request"
        else:
            kind = "metadata" if isinstance(kind_of, str) else "untyped"
        return Entry(record, kind, kind_of, uuid, parent, timestamp, sidechain, None, session)
    version = get("version")
    cwd = get("cwd")
    return Entry(
        record,
        kind,
        kind_of,
        uuid,
        parent,
        timestamp,
        sidechain,
        subtype,
        session,
        version if type(version) is str else None,
        cwd if type(cwd) is str else None,
        message,
        blocks,
        meta,
        summary,
        attachment,
        model,
        usage,
        key,
        api_error,
        ctxtop_usage,
        requested,
    )


def is_subagent_log(entries: Iterable[Any]) -> bool:
    """Whether a file is a sub-agent's own log: its conversation starts with a sidechain line
    (then its sidechain lines are its own window, not another's)."""
    for found in entries:
        if isinstance(found, Entry) and found.kind in _MESSAGE_KINDS:
            return found.sidechain
    return False

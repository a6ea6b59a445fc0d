"""Claude Code JSONL transcripts: 1.0.x inline sidechains, 2.0.x agent files, 2.1.x subagents/.

The rules followed here are in ../shared/docs/agent-log-formats.md §1 (quoted by section):

- one API response is written as one line per content block with the same ``message.id``; the
  usage is repeated and only the last line's values are final (§1.5);
- the active context is the chain from the newest leaf back through ``parentUuid``, a
  ``compact_boundary`` (``parentUuid: null``) starting a new root (§1.7, §1.8); parallel tool
  results whose parent is an earlier line of the chain are re-attached (§1.4, ``DtY``);
- ``progress`` records and non-boundary ``system`` lines are not sent to the model; children of
  such lines are re-parented on their parent (§1.3);
- sub-agents: inline ``isSidechain`` lines (1.0.x), ``agent-<id>.jsonl`` beside the session
  (2.0.x), ``<session>/subagents/**/agent-<id>.jsonl`` with ``.meta.json`` (2.1.x); replayed
  parent responses (same ``message.id``) are not counted again (§1.4);
- a sub-agent's file opened on its own (its conversation starts with a sidechain line) is a
  session of its own, naming its parent session and tool call (``claude_subagent``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Container, Mapping, Sequence
from pathlib import Path
from sys import intern
from typing import Any

import msgspec

from ctxtop.engine.agents.claude_code import history as lean
from ctxtop.engine.agents.claude_code import microcompact, prompt_log, record_types
from ctxtop.engine.agents.claude_code import subagent as claude_subagent
from ctxtop.engine.agents.claude_code.entries import (
    BAD_SHAPE,
    CONVERSATION_KINDS,
    MESSAGE_TYPES,
    USAGE_KEYS,
    Entry,
    copied,
    entry,
    usage_from,
)
from ctxtop.engine.agents.claude_code.process import ProcessStarts
from ctxtop.engine.agents.claude_code.rules import (
    claude_autocompact_at,
    claude_cache_ttl,
    claude_cli_window,
    claude_settings,
)
from ctxtop.engine.files import read_head
from ctxtop.engine.sessions.adapter import (
    CERTAIN,
    LIKELY,
    NOT_MINE,
    Adapter,
    logs_tokens,
    token_count,
)
from ctxtop.engine.sessions.fork_mark import CTXTOP_TRIGGER
from ctxtop.engine.sessions.model import (
    Compaction,
    Message,
    Response,
    Role,
    SessionState,
    Usage,
)
from ctxtop.engine.sessions.tail import ByteSource

_CONVERSATION_TYPES = {"user", "assistant", "system", "attachment", "progress", "summary"}
# The history lines a cold read takes in its lean reading (history.py); others take the full path.
_LEAN_KINDS = frozenset({"user", "assistant", "attachment", "system", "progress"})
# Session-level records that may come before any conversation line (agent-log-formats.md §1.3).
_METADATA_TYPES = {
    "queue-operation",
    "file-history-snapshot",
    "custom-title",
    "ai-title",
    "last-prompt",
    "tag",
    "mode",
    "permission-mode",
    "atis-latch",
    "cost-state",
    "tools-used",
    "content-replacement",
    "worktree-state",
}
SYNTHETIC_MODEL = "<synthetic>"
SUBAGENT_TOOLS = claude_subagent.SUBAGENT_TOOLS
# A large tool output saved to <session>/tool-results/, the model seeing a preview (§1.6).
PERSISTED_OUTPUT = "<persisted-output>"
_PERSISTED_PATH = re.compile(r"Full output saved to: (\S+)")
# The entries a window takes (``entries.CONVERSATION_KINDS`` less the prompt snapshots).
_WINDOW_KINDS = frozenset({"message", "attachment", "system", "compaction", "microcompaction"})
# Bulky record types that carry nothing the report uses; Claude Code writes "type" first in them
# (agent-log-formats.md §1.3), so a prefix test spares decoding them.
_IGNORED_PREFIXES = tuple(
    f'{{"type":"{kind}"'.encode()
    for kind in (
        "api-request-blob",
        "api-request",
        "file-history-snapshot",
        "file-history-delta",
        "cost-state",
        "atis-latch",
        "tools-used",
        "last-prompt",
    )
)
_API_REQUEST = b'{"type":"api-request",'
# The beta that gives a Claude model its 1M-token window; 2.1.x records each request's betas in
# ``api-request`` lines, and ``requestedModel`` ends in "[1m]" when the user picked that window.
LONG_CONTEXT_BETA = b"context-1m"
LONG_CONTEXT_WINDOW = 1_000_000


class _Chain:
    """The active chain of one window, kept incrementally.

    ``messages`` is the chain in order; ``position`` maps a uuid on the chain to its index.
    Extending the leaf is O(1); a branch (rewind, edit) rebuilds the chain from the node index.
    """

    def __init__(self, state: SessionState) -> None:
        self.state = state
        self.nodes: dict[str, tuple[str | None, Message | None]] = {}  # uuid → (parent, message)
        self.position: dict[str, int] = {}
        self.redirect: dict[str, list[str]] = {}  # compaction summary → messages it preserved
        self.anchor: str | None = None  # the summary of the newest compaction's redirect

    def resolve(self, parent: str | None) -> str | None:
        """Skip transparent nodes (progress, non-boundary system lines) up to a real message;
        a compaction summary's children hang after the messages it preserved."""
        if parent in self.redirect:
            return self.redirect[parent][-1]
        seen = 0
        while parent is not None and seen < 10_000:
            node = self.nodes.get(parent)
            if node is None or node[1] is not None or parent in self.position:
                return parent
            parent = node[0]
            seen += 1
        return parent

    def add_transparent(self, uuid: str, parent: str | None) -> None:
        self.nodes.setdefault(uuid, (parent, None))

    def preserve(self, anchor: str, uuids: list[str]) -> None:
        """A compaction kept ``uuids`` (earlier lines) verbatim after ``anchor`` (its summary).

        Claude Code's loader re-links them there (2.1.x ``compactMetadata.preservedMessages``,
        agent-log-formats.md §1.7-1.8): they follow the summary in the context, and the lines
        written after it hang off the summary but come after them.
        """
        kept = [uuid for uuid in uuids if self.nodes.get(uuid, (None, None))[1] is not None]
        if not kept:
            return
        previous = anchor
        for uuid in kept:
            self.nodes[uuid] = (previous, self.nodes[uuid][1])
            previous = uuid
        self.redirect[anchor] = kept
        self.anchor = anchor

    def add(self, uuid: str, parent: str | None, message: Message, *, new_root: bool) -> bool:
        """Add a message; returns whether it is now on the active chain (always, as newest)."""
        if uuid in self.nodes:
            return uuid in self.position
        context = self.state.context
        if not new_root and context and parent == context[-1].id and parent not in self.redirect:
            # Most lines continue the newest message (as below, without resolving the parent).
            self.nodes[uuid] = (parent, message)
            self._append(uuid, message)
            return True
        parent = None if new_root else self.resolve(parent)
        self.nodes[uuid] = (parent, message)
        if new_root:
            self.anchor = None
        if new_root or (parent is None and not context):
            # A compaction keeps the last response known until the next one arrives.
            self._replace([message], [uuid], reset=not new_root)
        elif parent is None or parent not in self.nodes:
            self._append(uuid, message)  # unknown parent: the best guess is that it continues
        elif context and self._leaf_uuid() == parent:
            self._append(uuid, message)
        elif parent in self.position and _is_tool_result(message):
            self._append(uuid, message)  # parallel tool result recovery
        elif parent in self.position:
            cut = self.position[parent] + 1
            for dropped in context[cut:]:
                self.position.pop(dropped.id, None)
            del context[cut:]
            self._append(uuid, message)
            self._reset_last_response()
        else:
            self._rebuild(uuid)
        return True

    def _leaf_uuid(self) -> str | None:
        return self.state.context[-1].id if self.state.context else None

    def _append(self, uuid: str, message: Message) -> None:
        context = self.state.context
        self.position[uuid] = len(context)
        context.append(message)
        for kept in self.redirect.get(uuid, ()):
            kept_message = self.nodes[kept][1]
            if kept_message is not None and kept not in self.position:
                self.position[kept] = len(context)
                context.append(kept_message)

    def _replace(self, messages: list[Message], uuids: list[str], *, reset: bool = True) -> None:
        self.state.context[:] = messages
        self.position = {uuid: index for index, uuid in enumerate(uuids)}
        if reset:
            self._reset_last_response()

    def _rebuild(self, leaf: str) -> None:
        messages: list[Message] = []
        uuids: list[str] = []
        current: str | None = leaf
        seen: set[str] = set()
        while current is not None and current not in seen:
            seen.add(current)
            node = self.nodes.get(current)
            if node is None:
                break
            if node[1] is not None:
                messages.append(node[1])
                uuids.append(current)
            if node[1] is not None and node[1].kind == "compact_boundary":
                break
            current = node[0]
        messages.reverse()
        uuids.reverse()
        self._replace(messages, uuids)

    def _reset_last_response(self) -> None:
        state = self.state
        state.last_response = None
        for message in reversed(state.context):
            if message.response_key is not None and message.response_key in state.responses:
                state.last_response = state.responses[message.response_key]
                return


def _compaction(
    meta: Mapping[str, Any], line: int, timestamp: str | None, mark: Any = None
) -> Compaction:
    """A ``compact_boundary`` line's compaction, from its ``compactMetadata``; ``mark``: the
    line's ``ctxtopCompaction`` (one ctxtop wrote into its fork is ctxtop's, not the user's)."""
    return Compaction(
        trigger=CTXTOP_TRIGGER if mark == CTXTOP_TRIGGER else str(meta.get("trigger") or "unknown"),
        pre_tokens=token_count(meta.get("preTokens")),
        post_tokens=token_count(meta.get("postTokens")),
        line=line,
        timestamp=timestamp,
    )


def _is_tool_result(message: Message) -> bool:
    return bool(message.blocks) and message.blocks[0].kind == "tool_result"


# The response a reader recorded last: it, its usage as the line logged it, as recorded.
_Recorded = tuple[Response, Any, Usage]


def _repeats(
    state: SessionState, before: _Recorded | None, key: str, logged: Any, model: str | None
) -> bool:
    """Whether a response line is the next block of the response recorded last, with the same
    figures (Claude Code writes one line per content block, §1.5): recording it again would
    change nothing. (A response of no tokens is left to the full rule: it may be a copy.)"""
    if before is None:
        return False
    response, usage, recorded = before
    return (
        response is state.last_response
        and response.key == key
        and response.usage is recorded
        and bool(recorded.total)
        and logged == usage
        and (not model or (model == response.model and model == state.model))
    )


class _Window:
    """One context window (the main session or one sub-agent) and the logic to feed it."""

    def __init__(self, state: SessionState, replayed: Container[str] = ()) -> None:
        self.state = state
        self.chain = _Chain(state)
        self.prompt = prompt_log.PromptLog()
        # Response keys of the parent session: a sub-agent transcript replaying one of them
        # did not make that request itself.
        self.replayed = replayed
        self._recorded: _Recorded | None = None  # (``_repeats``)

    def feed(self, line_entry: Entry, line: int) -> None:
        kind = line_entry.kind
        state = self.state
        uuid = line_entry.uuid
        if kind == "snapshot":  # the prompt sent (other attachments tell it nothing)
            if self.prompt.feed(line_entry.record, line):
                state.prompt_parts = self.prompt.current
            if uuid is not None:  # a link of the chain, no message
                self.chain.add_transparent(uuid, line_entry.parent)
            return
        if kind == "request" and self.prompt.feed(line_entry.record, line):
            state.prompt_parts = self.prompt.current
        if kind not in _WINDOW_KINDS:
            if kind == "progress" and uuid is not None:
                self.chain.add_transparent(uuid, line_entry.parent)
            return
        if uuid is None:
            state.skip(line, f"{line_entry.type} record without a uuid")
            return
        state.touch(line_entry.timestamp)
        if line_entry.type == "system":
            self._system(line_entry, uuid, line)
            return
        message = self._message(line_entry, uuid, line)
        if message is None:
            return
        on_chain = self.chain.add(uuid, line_entry.parent, message, new_root=False)
        if line_entry.type == "assistant":
            self._response(line_entry, message, line, on_chain)

    def _system(self, line_entry: Entry, uuid: str, line: int) -> None:
        if line_entry.kind == "microcompaction":
            if uuid not in self.chain.nodes:
                microcompact.apply(self.chain, line_entry, line)
            self.chain.add_transparent(uuid, line_entry.parent)
            return
        if line_entry.kind != "compaction":
            self.chain.add_transparent(uuid, line_entry.parent)
            return
        ts = line_entry.timestamp
        if uuid not in self.chain.nodes:
            self.state.keep_context()
            meta = line_entry.compact_metadata
            self.state.record_compaction(_compaction(meta, line, ts, line_entry.ctxtop_mark))
        message = Message(uuid, "system", [], line, ts, kind="compact_boundary")
        if self.chain.add(uuid, None, message, new_root=True):
            preserved = line_entry.preserved
            if preserved is not None:
                self.chain.preserve(*preserved)

    def _message(self, line_entry: Entry, uuid: str, line: int) -> Message | None:
        ts = line_entry.timestamp
        blocks = line_entry.blocks
        if line_entry.kind == "attachment":
            assert blocks is not None
            return Message(uuid, "user", blocks, line, ts, kind="attachment")
        if blocks is None:  # (no message object)
            self.state.skip(line, f"{line_entry.type} record without a message")
            return None
        label = "message"
        if line_entry.compact_summary:
            label = "compact_summary"
        elif line_entry.meta:
            label = "meta"
        role: Role = "assistant" if line_entry.type == "assistant" else "user"
        message = Message(uuid, role, blocks, line, ts, kind=label)
        for block in blocks:
            if block.kind == "tool_use" and block.tool_call_id:
                self.state.record_tool_call(
                    block.tool_call_id,
                    block.tool_name or "unknown",
                    line=line,
                    raw_input=block.raw,
                )
            elif block.kind == "tool_result" and block.tool_call_id:
                _record_result(self.state, block.tool_call_id, block.text, block.is_error)
        return message

    def _response(self, line_entry: Entry, message: Message, line: int, on_chain: bool) -> None:
        model = line_entry.model
        if model == SYNTHETIC_MODEL or (line_entry.api_error and not line_entry.usage):
            return
        if line_entry.usage_is_ctxtops:  # usage ctxtop wrote into its fork: no request made
            if isinstance(model, str):
                self.state.model = model
            return
        key = line_entry.response_key
        assert key is not None  # (an assistant line with a message has one)
        if key in self.replayed:
            return  # a parent response replayed in the sub-agent transcript
        logged = line_entry.usage
        name = model if isinstance(model, str) else None
        state = self.state
        if _repeats(state, self._recorded, key, logged, name):
            message.response_key = key  # (its timestamp is touched already)
            return
        if not logs_tokens(logged, USAGE_KEYS):
            return
        usage = usage_from(logged)
        if not usage.total and line_entry.copied:
            return
        message.response_key = key
        response = state.record_response(
            key,
            usage,
            model=name,
            line=line,
            timestamp=line_entry.timestamp,
            on_context=on_chain and state.context[-1] is message,
        )
        self._recorded = (response, logged, usage)


def _session_id_of(line: bytes) -> Any:
    try:
        record = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    return record.get("sessionId") if isinstance(record, dict) else None


# How far back from the end of a log its last compaction boundary is looked for before the
# first read (a few windows of a 1M-token context); further back, it is looked for once the
# first read meets a boundary (the lines before it read in full): one chain of 100 MB without
# any is not searched through (0.05 s of its read).
PLAN_WITHIN = 32 << 20
# A line that opens with its type (metadata, ``api-request``: §1.3) of a kind the lean reading
# does not take goes the full path without a lean decoding first.
_TYPE_FIRST = b'{"type":"'
_LEAN_PREFIXES = tuple(_TYPE_FIRST + kind.encode() + b'"' for kind in _LEAN_KINDS)


class ClaudeCodeAdapter(Adapter):
    agent = "claude-code"
    label = "Claude Code"
    profile = "claude-code"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._main = _Window(self.state)
        self._processes = ProcessStarts(self.state)
        self._windows: dict[str, _Window] = {}
        self._sidechain_root: dict[str, str] = {}  # 1.0.x: sidechain uuid → sub-agent id
        self._task_prompts: dict[str, str] = {}  # 1.0.x: Task prompt → tool_use id
        self._companions: list[Path] = []
        self._flat_checked: dict[Path, bool] = {}
        # Whether this file is itself a sub-agent's transcript (None until its first line of
        # conversation says), and for one: the session ids its lines name, its first prompt.
        self._own_subagent: bool | None = None
        self._own_session_ids: list[str] = []
        self._own_prompt: str | None = None
        self._own_meta: dict[str, Any] = {}
        self._parent: claude_subagent.ParentSession | None = None
        self._history: lean.History | None = None  # a cold read's history (``plan_history``)
        self._open_history: Callable[[], ByteSource] | None = None  # (until it is planned)
        self._lean_last: _Recorded | None = None  # the lean reading's (``_repeats``)

    @classmethod
    def detect(cls, head: Sequence[Any]) -> int:
        score = NOT_MINE
        for record in head:
            if not isinstance(record, dict) or not isinstance(record.get("type"), str):
                continue
            message = record.get("message")
            if isinstance(message, dict) and "parts" in message:
                return NOT_MINE  # Gemini-style parts in the same envelope: Qwen Code's
            if record.get("type") in _CONVERSATION_TYPES and "parentUuid" in record:
                return CERTAIN
            kind = record["type"]
            if (kind == "summary" and "leafUuid" in record) or (
                "sessionId" in record
                and (kind in _METADATA_TYPES or kind.startswith("api-request"))
            ):
                score = LIKELY
        return score

    # -- main file -------------------------------------------------------------------------

    def ignores(self, raw: bytes) -> bool:
        # (A conversation line opens with "parentUuid": one test rules most lines out.)
        if not raw.startswith(_TYPE_FIRST) or not raw.startswith(_IGNORED_PREFIXES):
            return False
        if raw.startswith(_API_REQUEST):
            if LONG_CONTEXT_BETA in raw or prompt_log.SYSTEM_KEY in raw:
                return False  # it asked for the 1M-token window, or sent its own system prompt
            if self._main.prompt.names_other_shape(raw):
                # Worth decoding, unless the log holds no shape (a redacted log's): then it
                # changes nothing, and is skipped uncounted, as it was counted when decoded.
                return not self._shapes_held()
        self.state.ignore_type(raw[9 : raw.index(b'"', 9)].decode())  # after {"type":"
        return True

    def _shapes_held(self) -> bool:
        """Whether a conversation's log (the main one, a sub-agent's) holds a request shape."""
        windows = self._windows.values()
        return bool(self._main.prompt.shapes) or any(window.prompt.shapes for window in windows)

    entry = staticmethod(entry)

    def feed(self, record: Any, line: int) -> None:
        self.feed_entry(entry(record, line), line)

    def feed_entry(self, line_entry: Entry, line: int) -> None:
        kind = line_entry.kind
        if kind == BAD_SHAPE:
            self.state.skip(line, "not a JSON object")
            return
        if kind != "message":  # (a user or assistant line is read: nothing to count)
            record_types.note(self.state, line_entry)
        if (
            self._open_history is not None
            and kind == "compaction"  # (of the main chain)
            and not line_entry.sidechain
        ):
            self._plan_history_now()
        history = self._history
        if history is not None and (history.active or history.seen):
            self._history_note(line_entry, line)
        self._metadata(line_entry)
        if kind == "request":
            if line_entry.type == prompt_log.REQUEST:
                self._request_window(line_entry)
            self._main.feed(line_entry, line)
            return
        if self._own_subagent is None and line_entry.type in MESSAGE_TYPES:
            self._own_subagent = line_entry.sidechain
            if self._own_subagent:
                self._open_as_subagent(line_entry)
        if self._own_subagent:
            self._own_record(line_entry)
        elif line_entry.sidechain:
            self._feed_sidechain(line_entry, line)
            return
        if kind == "message" or kind == "metadata":  # (the lines that tell process starts)
            self._processes.feed(line_entry, line)
        self._main.feed(line_entry, line)
        if kind != "message":
            if line_entry.type == "system" and self._history is not None:
                self._history_boundary()
        elif line_entry.type == "assistant":
            for call_id, prompt in line_entry.spawns():
                self._task_prompts[prompt] = call_id
            if line_entry.requested_model is not None:
                _note_requested(self.state, line_entry.requested_model)

    # -- a cold read's history (engine/agents/claude_code/history.py) ----------------------

    def plan_history(self, open_source: Callable[[], ByteSource]) -> None:
        with open_source() as source:
            self._history = lean.plan(source, PLAN_WITHIN)
        if self._history is None:  # (planned at the first compaction boundary read, if any)
            self._open_history = open_source

    def _plan_history_now(self) -> None:
        """The main chain's first compaction boundary in the first read of a log whose end has
        none: the history planned (``lean.plan``); the lines before it were read in full, their
        uuids are noted as those of the history's lines read in full are (``_history_note``)."""
        open_source, self._open_history = self._open_history, None
        assert open_source is not None
        try:
            with open_source() as source:
                history = lean.plan(source) or lean.History()  # (None only with ``within``)
        except OSError:
            history = lean.History()  # (the file is gone: every line is read in full)
        if history.active and not self._own_subagent:
            for uuid in self._main.chain.nodes:
                if uuid not in history.preserved:
                    history.seen.add(hash(uuid))
        self._history = history

    def history_read(self) -> None:
        if self._open_history is not None:  # no compaction in the first read
            self._open_history = None
            self._history = lean.History()  # (for what a session followed after it needs)
        history = self._history
        if history is None or history.split_uuid is None:
            return
        last = self.state.last_response
        # The context figures come from a response after the split (its first boundary found
        # by a byte search may have none: an assistant line of a sub-agent's progress).
        if history.active or last is None or last.line < history.split_line:
            self.needs_full_read = True

    def _history_note(self, line_entry: Entry, line: int) -> None:
        """A line of the full path: note a history line's uuid; before the split boundary, let
        the history's context go; after it, ask for a full read for a line that hangs off the
        history (a rewind across the compaction) or repeats one of its lines (called only while
        there is a history: not for one chain without compaction)."""
        history = self._history
        assert history is not None
        if line_entry.sidechain or self._own_subagent:
            return
        uuid = line_entry.uuid
        if history.active:
            if uuid == history.split_uuid and line_entry.type == "system":
                history.active = False
                history.split_line = line
                history.compactions_at_split = len(self.state.compactions)
                # What the history's full lines left there is not the context of any figure.
                self.state.context.clear()
                self._main.chain.position.clear()
                self.state.context_before_rewrite = None
            elif uuid is not None and uuid not in history.preserved:
                history.seen.add(hash(uuid))
            return
        seen = history.seen
        parent = line_entry.parent
        if (uuid is not None and hash(uuid) in seen) or (
            isinstance(parent, str) and hash(parent) in seen
        ):
            self.needs_full_read = True

    def _history_boundary(self) -> None:
        """After a compaction of the main chain: let go of the messages that left the context
        (a session followed all day keeps one window of messages, not its whole history).

        The first compaction after the split keeps the context before it (as a full read
        would) only when a response since the split is on it; else the figures would need the
        history's context: a full read."""
        history = self._history
        assert history is not None
        compactions = len(self.state.compactions)
        if history.active or compactions == history.compactions_released:
            return
        history.compactions_released = compactions
        self._release_history(history)
        if history.split_uuid is None or not history.check_boundary:
            return
        if compactions <= history.compactions_at_split + 1:
            return  # the split boundary itself
        history.check_boundary = False
        kept = self.state.context_before_rewrite
        if kept is None or kept[1] < history.split_line:
            self.needs_full_read = True

    def _release_history(self, history: lean.History) -> None:
        """Forget the chain's lines that are not on the context now (nor kept by the
        compaction for its summary), noting their uuids: a line that hangs off one of them
        later (a rewind across the compaction) asks for a full read."""
        chain = self._main.chain
        keep = set(chain.position)
        anchor = chain.anchor
        chain.redirect = {} if anchor is None else {anchor: chain.redirect[anchor]}
        if anchor is not None:
            keep.add(anchor)
            keep.update(chain.redirect[anchor])
        seen = history.seen
        for uuid in [uuid for uuid in chain.nodes if uuid not in keep]:
            seen.add(hash(uuid))
            del chain.nodes[uuid]

    def feed_history(self, raw: bytes, line: int) -> bool:
        history = self._history
        if history is None or not history.active or self._own_subagent is not False:
            return False
        if raw.startswith(_TYPE_FIRST) and not raw.startswith(_LEAN_PREFIXES):
            return False  # a record Claude Code writes "type" first in: none the lean path takes
        try:
            record = lean.decode_line(raw)
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError, RecursionError):
            return False  # a shape the lean reading does not take: the full path's
        kind = record.type
        attachment = record.attachment
        if kind == "attachment" and attachment and attachment.type == prompt_log.SNAPSHOT:
            return self._lean_snapshot(raw, line, history)  # (the prompt sent: no message)
        if record.usage_mark is not msgspec.UNSET:
            return False  # usage ctxtop wrote: the full path leaves it out
        uuid = record.uuid
        if (
            kind not in _LEAN_KINDS
            or record.isSidechain
            or uuid is None
            or uuid == history.split_uuid
            or uuid in history.preserved
            or record.isApiErrorMessage
            or record.subtype == microcompact.SUBTYPE  # (the full path records it)
        ):
            return False
        key = hash(uuid)
        if kind == "progress":
            history.seen.add(key)
            history.lean_lines += 1
            return True
        message = record.message
        content: lean.Content | None = None
        if kind == "user" or kind == "assistant":
            if message is None:
                return False  # the full path reports it
            content = lean.content_of(message, kind, record)
            if content is None:
                return False
        state = self.state
        if record.version is not None:
            state.agent_version = record.version
        if state.session_id is None:
            state.session_id = record.sessionId
        if record.cwd is not None:
            state.cwd = record.cwd
        timestamp = record.timestamp
        if timestamp:  # (``state.touch``, inline: once a line)
            if state.first_activity is None:
                state.first_activity = timestamp
            if state.last_activity is None or timestamp > state.last_activity:
                state.last_activity = timestamp
        if content is not None:
            assert message is not None
            self._processes.feed_turn(kind, content.opens_turn)
            self._lean_message(record, message, content, line, timestamp)
        elif kind == "system" and record.subtype == "compact_boundary" and key not in history.seen:
            self._lean_compaction(record, line, timestamp)
        elif kind == "system":
            record_types.note_system(state, record.subtype)
        history.seen.add(key)
        history.lean_lines += 1
        return True

    def _lean_snapshot(self, raw: bytes, line: int, history: lean.History) -> bool:
        """A history line recording the prompt sent (no message): the prompt noted as the full
        path notes it."""
        try:
            record = lean.decode_value(raw)
        except (msgspec.DecodeError, ValueError, RecursionError):
            return False
        snapshot = entry(record, line)
        uuid = snapshot.uuid
        if uuid is None or snapshot.sidechain or snapshot.kind != "snapshot":
            return False
        window = self._main
        if window.prompt.feed(record, line):
            self.state.prompt_parts = window.prompt.current
        history.seen.add(hash(uuid))
        history.lean_lines += 1
        return True

    def _lean_message(
        self,
        record: lean.Line,
        message: lean.Message,
        content: lean.Content,
        line: int,
        timestamp: str | None,
    ) -> None:
        """A history message's tool calls and results, its response, as ``_Window.feed`` and
        ``feed`` record them (no message kept: the history is not in the context)."""
        state = self.state
        for call_id, name, text, is_error in content.tools:
            if text is None:
                state.record_tool_call(call_id, name, line=line)
                continue
            _record_result(state, call_id, text, is_error)
        if record.type != "assistant":
            return
        model = message.model
        if model is not None:
            model = intern(model)  # (one string per model, not one per response)
        if model != SYNTHETIC_MODEL:
            key = message.id or record.requestId or record.uuid
            key = key if isinstance(key, str) else str(key)
            usage = message.usage
            if _repeats(state, self._lean_last, key, usage, model):
                pass  # the same response's next block, the same figures (``touch`` done)
            elif key not in self._main.replayed and usage is not None and usage.logged():
                recorded = usage.normalised()
                if recorded.total or not copied(record.requestSessionId, record.sessionId):
                    response = state.record_response(
                        key, recorded, model=model, line=line, timestamp=timestamp
                    )
                    self._lean_last = (response, usage, recorded)
        for call_id, prompt in content.spawns:
            self._task_prompts[prompt] = call_id
        _note_requested(state, record.requestedModel)

    def _lean_compaction(self, record: lean.Line, line: int, timestamp: str | None) -> None:
        meta = record.compactMetadata if isinstance(record.compactMetadata, dict) else {}
        self.state.record_compaction(_compaction(meta, line, timestamp, record.ctxtopCompaction))

    # -- this file is a sub-agent's transcript ---------------------------------------------

    def _open_as_subagent(self, line_entry: Entry) -> None:
        state = self.state
        agent_id = line_entry.agent_id
        state.subagent_id = (
            agent_id if agent_id is not None else claude_subagent.agent_id_of(self.path)
        )
        self._own_meta = claude_subagent.read_meta(self.path)
        tool_use = self._own_meta.get("toolUseId")
        state.parent_tool_call_id = tool_use if isinstance(tool_use, str) else None
        self._describe_own()

    def _own_record(self, line_entry: Entry) -> None:
        """Note the first prompt and the session ids of a sub-agent's own file, and look for
        its parent whenever a new session id appears (before its responses are counted)."""
        if self._own_prompt is None:
            content = line_entry.prompt
            if content is not None:
                self._own_prompt = content
                self._describe_own()
        session_id = line_entry.session_id
        if session_id is not None and session_id not in self._own_session_ids:
            self._own_session_ids.append(session_id)
            if self.state.parent_path is None:
                self._find_parent()

    def _describe_own(self) -> None:
        state = self.state
        state.description = claude_subagent.describe(
            state.subagent_id or "",
            claude_subagent.meta_description(self._own_meta),
            self._own_prompt,
        )
        if self._parent is not None and state.parent_tool_call_id is None and self._own_prompt:
            state.parent_tool_call_id = self._parent.spawn_prompts.get(self._own_prompt)

    def _find_parent(self) -> None:
        # The newest session id first: a resumed process writes its first line under a fresh
        # id and the rest under the resumed session's (see ``_belongs_here``).
        ids = list(reversed(self._own_session_ids))
        for candidate in claude_subagent.parent_candidates(self.path, ids):
            if candidate == self.path:
                continue
            parent = claude_subagent.read_parent(candidate)
            if parent is not None:
                self._parent = parent
                self.state.parent_path = parent.path
                self.state.parent_session_id = parent.session_id
                self._main.replayed = parent.response_keys
                self._describe_own()
                return

    def _request_window(self, line_entry: Entry) -> None:
        if any(
            isinstance(beta, str) and beta.startswith("context-1m") for beta in line_entry.betas
        ):
            self.state.context_window = LONG_CONTEXT_WINDOW

    def _metadata(self, line_entry: Entry) -> None:
        state = self.state
        kind = line_entry.kind
        if kind == "metadata":
            title = line_entry.title
            if title is not None:
                state.title = (state.title or title) if line_entry.type == "summary" else title
            return
        if kind not in CONVERSATION_KINDS:
            return
        if line_entry.version is not None:
            state.agent_version = line_entry.version
        if state.session_id is None and line_entry.session_id is not None:
            state.session_id = line_entry.session_id
        if line_entry.cwd is not None:
            state.cwd = line_entry.cwd

    def _feed_sidechain(self, line_entry: Entry, line: int) -> None:
        """1.0.x: a sidechain is a sub-agent; its id is the uuid of its root line."""
        uuid = line_entry.uuid
        if uuid is None:
            return
        parent = line_entry.parent
        agent_id = line_entry.agent_id
        if agent_id is None:
            agent_id = self._sidechain_root.get(parent, uuid) if isinstance(parent, str) else uuid
        self._sidechain_root[uuid] = agent_id
        window = self._window(agent_id, self.path)
        self._describe(window.state, line_entry)
        window.feed(line_entry, line)

    def _describe(self, state: SessionState, line_entry: Entry) -> None:
        """Without a ``.meta.json``: the sub-agent's first prompt names it and its Task call."""
        if state.description is not None:
            return
        content = line_entry.prompt
        if content is not None:
            state.parent_tool_call_id = self._task_prompts.get(content)
            agent_id = state.subagent_id or ""
            state.description = claude_subagent.describe(agent_id, None, content)

    def _window(self, agent_id: str, path: Path) -> _Window:
        window = self._windows.get(agent_id)
        if window is None:
            window = _Window(self.state.subagent(agent_id, path), self._main.state.responses)
            window.state.continues_parent = agent_id.startswith(
                claude_subagent.COMPACTION_AGENT_PREFIX
            )
            self._windows[agent_id] = window
        return window

    # -- sub-agent files -------------------------------------------------------------------

    def companions(self) -> list[Path]:
        if self._own_subagent:
            return []  # a sub-agent's siblings are its parent's, not its own
        if not self._companion_scan_due():
            return self._companions
        found: list[Path] = []
        project = self.path.parent
        session_dir = project / self.path.stem
        subagents = session_dir / "subagents"
        if subagents.is_dir():
            found.extend(sorted(subagents.rglob("agent-*.jsonl")))
        if self.state.session_id is not None:
            for candidate in sorted(project.glob("agent-*.jsonl")):
                if self._belongs_here(candidate):
                    found.append(candidate)
        self._companions = found
        return found

    def _belongs_here(self, candidate: Path) -> bool:
        """2.0.x flat ``agent-*.jsonl``: ours when one of its first records names our session.

        A file's first line may carry another id: a resumed session's process starts under a
        fresh session id and writes its warm-up agent's prompt under it, then the reply under
        the resumed one [OBS realagents 2.0.77 run].
        """
        known = self._flat_checked.get(candidate)
        if known is not None:
            return known
        try:
            head = read_head(candidate, 64 * 1024)
        except OSError:
            return False
        lines = head.split(b"\n")[:-1]  # complete lines only
        if not lines:
            return False  # nothing complete yet: ask again on the next scan
        belongs = any(_session_id_of(line) == self.state.session_id for line in lines)
        if belongs or len(lines) > 1:
            self._flat_checked[candidate] = belongs
        return belongs

    def feed_companion(self, path: Path, record: Any, line: int) -> None:
        line_entry = entry(record, line)
        if line_entry.kind == BAD_SHAPE:
            self.state.skip(line, "not a JSON object", str(path))
            return
        record_types.note(self.state, line_entry)
        agent_id = path.stem.removeprefix("agent-")
        window = self._windows.get(agent_id)
        if window is None:
            window = self._window(agent_id, path)
            self._read_meta(path, window.state)
        self._describe(window.state, line_entry)
        window.feed(line_entry, line)

    def _read_meta(self, path: Path, state: SessionState) -> None:
        meta = claude_subagent.read_meta(path)
        agent_id = state.subagent_id or ""
        described = claude_subagent.meta_description(meta)
        if described or agent_id.startswith(claude_subagent.COMPACTION_AGENT_PREFIX):
            state.description = claude_subagent.describe(agent_id, described, None)
        tool_use = meta.get("toolUseId")
        state.parent_tool_call_id = tool_use if isinstance(tool_use, str) else None

    # -- agent facts -----------------------------------------------------------------------

    @classmethod
    def cli_window(cls, model: str | None) -> int | None:
        return claude_cli_window(model, os.environ)

    def autocompact_at(self, context_window: int) -> int | None:
        """Claude Code's rule (engine/agents/claude_code/rules.py). The agent reads it from the
        environment and its settings files; ctxtop usually runs in the same environment, so the
        same variables and the files of the session's project are honoured."""
        settings = claude_settings(os.environ, Path.home(), self.state.cwd)
        return claude_autocompact_at(context_window, self.state.model, os.environ, settings)

    def prompt_cache_ttl(self) -> float | None:
        """The settings' and the environment's choice of cache lifetime (rules.py)."""
        settings = claude_settings(os.environ, Path.home(), self.state.cwd)
        return claude_cache_ttl(os.environ, settings)

    def compacting(self) -> bool:
        """The compaction agent (``agent-acompact-*``) wrote after the last compact boundary:
        Claude Code is summarising the conversation and has not logged the result yet."""
        state = self.state
        done = state.compactions[-1].timestamp or "" if state.compactions else ""
        return any(
            (child.subagent_id or "").startswith(claude_subagent.COMPACTION_AGENT_PREFIX)
            and (child.last_activity or "") > done
            for child in state.subagents.values()
        )


def _record_result(state: SessionState, call_id: str, text: str, is_error: bool) -> None:
    """A tool result, and where the agent saved its full output when only a preview came."""
    state.record_tool_result(call_id, text, is_error=is_error)
    if text.startswith(PERSISTED_OUTPUT):
        saved = _PERSISTED_PATH.search(text, 0, 4096)
        state.tools.live[call_id].persisted_to = saved.group(1) if saved else ""


def _note_requested(state: SessionState, requested: Any) -> None:
    """A request that asked for the 1M-token window (``requestedModel`` ending "[1m]")."""
    if isinstance(requested, str) and requested.endswith("[1m]"):
        state.context_window = LONG_CONTEXT_WINDOW

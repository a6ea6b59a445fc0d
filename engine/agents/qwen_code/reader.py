"""Qwen Code chat recordings: ``~/.qwen/projects/<cwd>/chats/<sessionId>.jsonl``.

The rules followed here are Qwen Code's own (0.24.4 npm bundle: ``ChatRecordingService``,
``SessionApiHistoryAccumulator``, ``chatCompressionService``; QwenLM/qwen-code
``packages/core/src/services/chatRecordingService.ts``), checked against sessions the real
0.24.4 CLI wrote (sample_sessions/qwen-code):

- every line is a record ``{uuid, parentUuid, sessionId, timestamp, type, cwd, version}``; the
  records form a tree (a rewind re-roots the chain) and the model sees, along the path from the
  newest record, the ``message`` (Gemini ``Content``: ``role`` user | model, ``parts``) of every
  record that has one, a ``realtime_message`` excepted;
- ``assistant`` records are the main agent's calls: ``usageMetadata {promptTokenCount (cached
  included), candidatesTokenCount, thoughtsTokenCount, totalTokenCount,
  cachedContentTokenCount}``, ``model`` and ``contextWindowSize`` (the window it compresses
  against);
- ``system`` records with ``subtype`` ``ui_telemetry`` carry an ``api_response`` event for every
  model call: the main agent's calls (also in their ``assistant`` record), its compression calls
  (only there) and sub-agents' calls (``subagent_name``; read from their own transcript);
- ``system``/``chat_compression``: ``info {originalTokenCount, newTokenCount,
  triggerReason}`` and ``compressedHistory``, the new history the model sees from then on;
- a sub-agent writes ``projects/<cwd>/subagents/<sessionId>/agent-<agentId>.jsonl`` (its calls'
  usage on ``assistant`` records too) and ``agent-<agentId>.meta.json`` (``toolUseId``,
  ``description``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxtop.engine.agents.qwen_code.entries import (
    COMPRESSION,
    RECORD_TYPES,
    SNAPSHOT_TAG,
    Content,
    QwenEntry,
    entry,
    usage_from,
)
from ctxtop.engine.agents.qwen_code.settings import compress_at, runtime_dir, threshold
from ctxtop.engine.files import read_json_object
from ctxtop.engine.paths import is_plain_name
from ctxtop.engine.sessions.adapter import CERTAIN, LIKELY, NOT_MINE, Adapter
from ctxtop.engine.sessions.entry_tree import Effect, EntryTree
from ctxtop.engine.sessions.model import Block, Compaction, Message, Role, SessionState

META_LIMIT = 1 << 16


def _blocks(
    state: SessionState, content: Content, failed: str | None = None, line: int = 0
) -> list[Block]:
    """A ``Content``'s parts → blocks, registering calls and results on ``state`` on the way
    (``failed``: the id of a call whose result is an error; ``line``: where the calls are)."""
    blocks: list[Block] = []
    for part in content.parts:
        kind = part.kind
        if kind == "text" or kind == "thought":
            blocks.append(Block("thinking" if kind == "thought" else "text", part.text))
        elif kind == "call" and part.call is not None:
            call = part.call
            if call.key:
                state.record_tool_call(call.key, call.name, line=line, raw_input=call.args)
            blocks.append(Block("tool_use", "", call.key or None, call.name, raw=call.args))
        elif kind == "result" and part.result is not None:
            result = part.result
            error = result.key == failed or result.error
            if result.key:
                if result.key not in state.tools:
                    state.record_tool_call(result.key, result.name)
                state.record_tool_result(result.key, result.text, is_error=error)
            blocks.append(Block("tool_result", result.text, result.key or None, is_error=error))
        elif kind == "image":
            blocks.append(Block("image"))
        elif kind == "other":
            blocks.append(Block("other", raw=part.raw))
    return blocks


class _Chat:
    """One recording (the main session or a sub-agent's) and the logic to feed its entries."""

    def __init__(self, state: SessionState) -> None:
        self.state = state
        self.tree = EntryTree(state.context)
        # The main agent's last call seen as an ``api_response`` event, not yet matched to its
        # ``assistant`` record: (key, prompt tokens).
        self.announced: tuple[str, int] | None = None
        self.awaiting_after: Compaction | None = None

    def feed(self, found: QwenEntry, line: int) -> None:
        state = self.state
        kind = found.kind
        if kind == "bad_shape":
            state.skip(line, "not a JSON object")
            return
        if kind == "unknown_type":
            state.unknown_type(found.type)
            return
        if kind == "unlinked" or found.uuid is None:
            state.skip(line, f"{found.type} record without a uuid or parentUuid")
            return
        state.touch(found.timestamp)
        if state.session_id is None and found.session_id is not None:
            state.session_id = found.session_id
        if state.cwd is None and found.cwd is not None:
            state.cwd = found.cwd
        if found.version is not None:
            state.agent_version = found.version
        if kind == "title":  # (written off the chain: not a step of it)
            if found.title is not None and state.subagent_id is None:
                state.title = found.title
            return
        effect: Effect | None = None
        if found.type == "system":
            effect = self._system(found, line)
        sent = found.message
        if effect is None and sent is not None and not found.unsent:
            effect = self._message(found, sent, line)
        self.tree.add(found.uuid, found.parent, effect)

    # -- messages ------------------------------------------------------------------------------

    def _message(self, found: QwenEntry, content: Content, line: int) -> Message:
        role: Role = "assistant" if content.role == "model" else "user"
        blocks = _blocks(self.state, content, found.failed_call, line)
        message = Message(str(found.uuid), role, blocks, line)
        message.timestamp = found.timestamp
        if found.type == "assistant":
            self._assistant(found, message, line)
        return message

    def _assistant(self, found: QwenEntry, message: Message, line: int) -> None:
        state = self.state
        if found.context_window:
            state.context_window = found.context_window
        if not found.usage_metadata:
            return
        usage = found.counts.usage() if found.counts is not None else None
        if usage is None:
            state.skip(line, f"assistant record {message.id[:12]} with malformed usageMetadata")
            return
        if not found.usage_logged:
            return
        key = message.id
        if self.announced is not None and self.announced[1] == usage.input_tokens_total:
            key = self.announced[0]  # the call its api_response event announced
        self.announced = None
        message.response_key = key
        state.record_response(key, usage, model=found.model, line=line, timestamp=found.timestamp)
        if self.awaiting_after is not None:
            self.awaiting_after.settle(usage.input_tokens_total)
            self.awaiting_after = None

    # -- system records ------------------------------------------------------------------------

    def _system(self, found: QwenEntry, line: int) -> Effect | None:
        if found.subtype == COMPRESSION:
            if found.compression is None:
                self.state.skip(line, "chat_compression without info")
                return None
            return self._compression(found, line)
        if found.event is not None:
            self._telemetry(found, line)
        if found.ignored:
            self.state.ignore_type(found.system_type)
        elif found.message is None:
            self.state.unknown_type(found.system_type)
        return None

    def _telemetry(self, found: QwenEntry, line: int) -> None:
        """A main-agent call's ``api_response``: counted now, on the context only once its
        ``assistant`` record comes (a compression call has none)."""
        event = found.event
        if event is None or event.subagent or self.state.subagent_id is not None:
            return  # a sub-agent's call: read from its own transcript
        usage = event.usage()
        if usage is None:
            self.state.skip(line, "api_response event with malformed token counts")
            return
        self.state.record_response(
            event.key,
            usage,
            model=event.model,
            line=line,
            timestamp=found.timestamp,
            on_context=False,
        )
        self.announced = (event.key, usage.input_tokens_total)

    def _compression(self, found: QwenEntry, line: int) -> Effect | None:
        info = found.compression
        assert info is not None
        compaction = Compaction(
            info.trigger,
            pre_tokens=info.pre_tokens,
            post_tokens=info.post_tokens,
            line=line,
            timestamp=found.timestamp,
            post_source=info.post_source,
        )
        self.announced = None  # that api_response was the compression's own call
        self.state.keep_context()
        self.state.record_compaction(compaction)
        self.awaiting_after = None if info.ours else compaction
        if found.compressed is None:
            return None
        messages: list[Message] = []
        for content in found.compressed:
            role: Role = "assistant" if content.role == "model" else "user"
            blocks = _blocks(self.state, content, line=line)
            message = Message(f"{found.uuid}#{content.at}", role, blocks, line, found.timestamp)
            summary = blocks and blocks[0].text.lstrip().startswith(SNAPSHOT_TAG)
            if role == "user" and (summary or (info.ours and not messages)):  # ctxtop's: first
                message.kind = "compact_summary"
            messages.append(message)
        return lambda _context: list(messages)


class QwenCodeAdapter(Adapter):
    agent = "qwen-code"
    label = "Qwen Code"
    entry = staticmethod(entry)

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._main = _Chat(self.state)
        self._chats: dict[Path, _Chat] = {}
        self._companions: list[Path] = []

    @classmethod
    def detect(cls, head: Sequence[Any]) -> int:
        score = NOT_MINE
        for record in head:
            if not isinstance(record, dict) or record.get("type") not in RECORD_TYPES:
                continue
            if "uuid" not in record or "parentUuid" not in record:
                continue
            message = record.get("message")
            if isinstance(message, dict) and isinstance(message.get("parts"), list):
                return CERTAIN
            if isinstance(record.get("systemPayload"), dict):
                score = LIKELY
        return score

    def feed(self, record: Any, line: int) -> None:
        self._main.feed(entry(record, line), line)  # (feed_entry's, one call less a line)

    def feed_entry(self, entry: Any, line: int) -> None:
        self._main.feed(entry, line)

    # -- sub-agents ----------------------------------------------------------------------------

    def companions(self) -> list[Path]:
        session_id = self.state.session_id
        if session_id is None or not self._companion_scan_due():
            return self._companions
        if not is_plain_name(session_id):  # from the log: "../x" would lead elsewhere
            return self._companions
        directory = self.path.parent.parent / "subagents" / session_id
        if directory.is_dir():
            self._companions = sorted(directory.glob("agent-*.jsonl"))
        return self._companions

    def feed_companion(self, path: Path, record: Any, line: int) -> None:
        chat = self._chats.get(path)
        if chat is None:
            agent_id = path.stem.removeprefix("agent-")
            child = self.state.subagent(agent_id, path)
            meta = read_json_object(path.with_suffix(".meta.json"), META_LIMIT)
            if isinstance(meta.get("toolUseId"), str):
                child.parent_tool_call_id = meta["toolUseId"]
            if isinstance(meta.get("description"), str):
                child.description = meta["description"]
            chat = self._chats[path] = _Chat(child)
        chat.feed(entry(record, line), line)

    # -- agent facts ---------------------------------------------------------------------------

    def autocompact_at(self, context_window: int) -> int | None:
        """Qwen Code's ``computeThresholds(window, pct).auto`` (see ``settings``), with the
        threshold of the settings beside this session's ``projects`` directory and its
        project's."""
        user_dir = self.path.parents[3] if len(self.path.parents) > 3 else None
        pct, _source = threshold(user_dir, self.state.cwd)
        return compress_at(context_window, pct)

    @classmethod
    def discover(cls, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        projects = runtime_dir(env, home) / "projects"
        if projects.is_dir():
            yield from projects.glob("*/chats/*.jsonl")


__all__ = ["SNAPSHOT_TAG", "QwenCodeAdapter", "usage_from"]

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

from ctxtop.engine.agents.gemini_cli.reader import blocks_from_parts
from ctxtop.engine.agents.qwen_code.settings import compress_at, runtime_dir, threshold
from ctxtop.engine.files import read_json_object
from ctxtop.engine.paths import is_plain_name
from ctxtop.engine.sessions.adapter import (
    CERTAIN,
    LIKELY,
    NOT_MINE,
    Adapter,
    logs_tokens,
    token_count,
)
from ctxtop.engine.sessions.entry_tree import Effect, EntryTree
from ctxtop.engine.sessions.fork_mark import COMPACTION_KEY, CTXTOP_TRIGGER
from ctxtop.engine.sessions.model import Compaction, Message, Role, SessionState, Usage

_RECORD_TYPES = ("user", "assistant", "tool_result", "system")
_USAGE_KEYS = ("promptTokenCount", "candidatesTokenCount", "totalTokenCount")
API_RESPONSE = "qwen-code.api_response"
SNAPSHOT_TAG = "<state_snapshot>"
_UNSENT = "realtime_message"  # a user record the model is not sent
META_LIMIT = 1 << 16
# System records that carry nothing the model sees or ctxtop shows (the bundle's subtypes).
_IGNORED_SUBTYPES = frozenset(
    {
        "attribution_snapshot",
        "at_command",
        "background_task_completed",
        "branch_checkpoint",
        "file_history_snapshot",
        "goal_runtime",
        "goal_state",
        "goal_turn_end",
        "omni_recall",
        "parent_session",
        "rewind",
        "session_artifact_event",
        "session_artifact_snapshot",
        "session_model",
        "session_source",
        "session_sources_snapshot",
        "slash_command",
        "turn_result",
        "ui_telemetry",
        "user_text_elements",
    }
)


def _count(raw: Mapping[str, Any], name: str) -> int | None:
    return token_count(raw.get(name) or 0)


def usage_from(
    prompt: int | None,
    cached: int | None,
    candidates: int | None,
    thoughts: int | None,
    total: int | None,
) -> Usage | None:
    """Qwen's counts → ``Usage``: the prompt includes the cached part; the answer is the total
    less the prompt (Qwen's own ``getUsageOutputTokenCountForPromptEstimate``), else the
    candidates, with the thoughts added when they are not in them."""
    if prompt is None or cached is None or candidates is None or thoughts is None:
        return None
    if total:
        output = max(total - prompt, 0)
    else:
        output = candidates if candidates > thoughts else candidates + thoughts
    return Usage(
        input_tokens=max(prompt - cached, 0),
        output_tokens=output,
        cache_read_tokens=min(cached, prompt),
        reasoning_tokens=thoughts,
    )


def _metadata_usage(raw: Mapping[str, Any]) -> Usage | None:
    return usage_from(
        _count(raw, "promptTokenCount"),
        _count(raw, "cachedContentTokenCount"),
        _count(raw, "candidatesTokenCount"),
        _count(raw, "thoughtsTokenCount"),
        _count(raw, "totalTokenCount"),
    )


def _event_usage(event: Mapping[str, Any]) -> Usage | None:
    return usage_from(
        _count(event, "input_token_count"),
        _count(event, "cached_content_token_count"),
        _count(event, "output_token_count"),
        _count(event, "thoughts_token_count"),
        _count(event, "total_token_count"),
    )


class _Chat:
    """One recording (the main session or a sub-agent's) and the logic to feed its records."""

    def __init__(self, state: SessionState) -> None:
        self.state = state
        self.tree = EntryTree(state.context)
        # The main agent's last call seen as an ``api_response`` event, not yet matched to its
        # ``assistant`` record: (key, prompt tokens).
        self.announced: tuple[str, int] | None = None
        self.awaiting_after: Compaction | None = None

    def feed(self, record: Any, line: int) -> None:
        state = self.state
        if not isinstance(record, dict):
            state.skip(line, "not a JSON object")
            return
        kind, uuid, parent = record.get("type"), record.get("uuid"), record.get("parentUuid")
        if kind not in _RECORD_TYPES:
            state.unknown_type(kind)
            return
        if not isinstance(uuid, str) or not (parent is None or isinstance(parent, str)):
            state.skip(line, f"{kind} record without a uuid or parentUuid")
            return
        timestamp = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
        state.touch(timestamp)
        if state.session_id is None and isinstance(record.get("sessionId"), str):
            state.session_id = record["sessionId"]
        if state.cwd is None and isinstance(record.get("cwd"), str):
            state.cwd = record["cwd"]
        if isinstance(record.get("version"), str):
            state.agent_version = record["version"]
        effect: Effect | None = None
        if kind == "system":
            subtype = record.get("subtype")
            if subtype == "custom_title":  # (written off the chain: not a step of it)
                self._title(record)
                return
            effect = self._system(record, uuid, line, timestamp)
        message = record.get("message")
        if effect is None and isinstance(message, dict) and record.get("subtype") != _UNSENT:
            effect = self._message(record, uuid, line, timestamp)
        self.tree.add(uuid, parent, effect)

    # -- messages ------------------------------------------------------------------------------

    def _message(
        self, record: Mapping[str, Any], uuid: str, line: int, timestamp: str | None
    ) -> Message:
        content = record["message"]
        role: Role = "assistant" if content.get("role") == "model" else "user"
        failed: set[str] = set()
        result = record.get("toolCallResult")
        if isinstance(result, dict) and result.get("status") == "error":
            failed.add(str(result.get("callId")))
        blocks = blocks_from_parts(self.state, content.get("parts"), failed, line)
        message = Message(uuid, role, blocks, line)
        message.timestamp = timestamp
        if record.get("type") == "assistant":
            self._assistant(record, message, line, timestamp)
        return message

    def _assistant(
        self, record: Mapping[str, Any], message: Message, line: int, timestamp: str | None
    ) -> None:
        state = self.state
        window = token_count(record.get("contextWindowSize"))
        if window:
            state.context_window = window
        raw = record.get("usageMetadata")
        if raw is None:
            return
        usage = _metadata_usage(raw) if isinstance(raw, dict) else None
        if usage is None:
            state.skip(line, f"assistant record {message.id[:12]} with malformed usageMetadata")
            return
        if not logs_tokens(raw, _USAGE_KEYS):
            return
        key = message.id
        if self.announced is not None and self.announced[1] == usage.input_tokens_total:
            key = self.announced[0]  # the call its api_response event announced
        self.announced = None
        model = record.get("model") if isinstance(record.get("model"), str) else None
        message.response_key = key
        state.record_response(key, usage, model=model, line=line, timestamp=timestamp)
        if self.awaiting_after is not None:
            self.awaiting_after.settle(usage.input_tokens_total)
            self.awaiting_after = None

    # -- system records ------------------------------------------------------------------------

    def _title(self, record: Mapping[str, Any]) -> None:
        payload = record.get("systemPayload")
        title = payload.get("customTitle") if isinstance(payload, dict) else None
        if isinstance(title, str) and self.state.subagent_id is None:
            self.state.title = title

    def _system(
        self, record: Mapping[str, Any], uuid: str, line: int, timestamp: str | None
    ) -> Effect | None:
        subtype = record.get("subtype")
        payload = record.get("systemPayload")
        if subtype == "chat_compression":
            if not isinstance(payload, dict) or not isinstance(payload.get("info"), dict):
                self.state.skip(line, "chat_compression without info")
                return None
            return self._compression(record, payload, uuid, line, timestamp)
        if subtype == "ui_telemetry" and isinstance(payload, dict):
            self._telemetry(payload.get("uiEvent"), uuid, line, timestamp)
        if isinstance(subtype, str) and subtype in _IGNORED_SUBTYPES:
            self.state.ignore_type(f"system/{subtype}")
        elif not isinstance(record.get("message"), dict):
            self.state.unknown_type(f"system/{subtype}")
        return None

    def _telemetry(self, event: Any, uuid: str, line: int, timestamp: str | None) -> None:
        """A main-agent call's ``api_response``: counted now, on the context only once its
        ``assistant`` record comes (a compression call has none)."""
        if not isinstance(event, dict) or event.get("event.name") != API_RESPONSE:
            return
        if event.get("subagent_name") is not None or self.state.subagent_id is not None:
            return  # a sub-agent's call: read from its own transcript
        usage = _event_usage(event)
        if usage is None:
            self.state.skip(line, "api_response event with malformed token counts")
            return
        found = event.get("response_id")
        key = found if isinstance(found, str) else uuid
        model = event.get("model") if isinstance(event.get("model"), str) else None
        self.state.record_response(
            key, usage, model=model, line=line, timestamp=timestamp, on_context=False
        )
        self.announced = (key, usage.input_tokens_total)

    def _compression(
        self,
        record: Mapping[str, Any],
        payload: Mapping[str, Any],
        uuid: str,
        line: int,
        timestamp: str | None,
    ) -> Effect | None:
        info = payload["info"]
        reason = info.get("triggerReason")  # (a list or object there is no known reason)
        trigger = (
            {"token_limit": "auto", "manual": "manual"}.get(reason)
            if isinstance(reason, str)
            else None
        )
        # One ctxtop wrote: its "after" is what the preview promised (the fork mark), fixed.
        ours = record.get(COMPACTION_KEY) == CTXTOP_TRIGGER
        compaction = Compaction(
            CTXTOP_TRIGGER if ours else trigger or str(info.get("triggerReason") or "unknown"),
            pre_tokens=token_count(info.get("originalTokenCount")),
            post_tokens=None if ours else token_count(info.get("newTokenCount")),
            line=line,
            timestamp=timestamp,
            post_source="estimate" if info.get("newTokenCountIsEstimated", True) else "logged",
        )
        self.announced = None  # that api_response was the compression's own call
        self.state.keep_context()
        self.state.record_compaction(compaction)
        self.awaiting_after = None if ours else compaction
        history = payload.get("compressedHistory")
        if not isinstance(history, list):
            return None
        messages: list[Message] = []
        for index, content in enumerate(history):
            if not isinstance(content, dict):
                continue
            role: Role = "assistant" if content.get("role") == "model" else "user"
            blocks = blocks_from_parts(self.state, content.get("parts"), line=line)
            message = Message(f"{uuid}#{index}", role, blocks, line, timestamp)
            summary = blocks and blocks[0].text.lstrip().startswith(SNAPSHOT_TAG)
            if role == "user" and (summary or (ours and not messages)):  # ctxtop's: the first
                message.kind = "compact_summary"
            messages.append(message)
        return lambda _context: list(messages)


class QwenCodeAdapter(Adapter):
    agent = "qwen-code"
    label = "Qwen Code"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._main = _Chat(self.state)
        self._chats: dict[Path, _Chat] = {}
        self._companions: list[Path] = []

    @classmethod
    def detect(cls, head: Sequence[Any]) -> int:
        score = NOT_MINE
        for record in head:
            if not isinstance(record, dict) or record.get("type") not in _RECORD_TYPES:
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
        self._main.feed(record, line)

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
        chat.feed(record, line)

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


__all__ = ["QwenCodeAdapter", "usage_from"]

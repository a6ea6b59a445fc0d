"""Gemini CLI chat recordings: ``~/.gemini/tmp/<project>/chats/session-*.jsonl``.

The rules followed here are in ../shared/docs/agent-log-formats.md §3 and in Gemini CLI's
``chatRecordingService`` (0.61.0 bundle, ``loadConversationRecord``), checked against logs the real
0.61.0 CLI wrote (tests/sessions/data/generated/gemini-cli):

- the first line is metadata ``{sessionId, projectHash, startTime, kind}``; a resumed session
  appends another one;
- a record with an ``id`` is a message (``user`` | ``gemini`` | ``info`` | ``error`` |
  ``warning``); the same id is written again when tokens or tool calls arrive, and the last copy
  wins, keeping the place of the first (the loader's ``messagesMap.set``);
- ``{"$set": {...}}`` patches metadata; a ``messages`` array in it clears the history and puts
  that one in its place (resume, chat compression); ``{"$rewindTo": id}`` drops that message and
  every later one;
- ``tokens`` on a ``gemini`` message is the usage of the request that produced it:
  ``input`` (promptTokenCount, cached included), ``cached``, ``output`` (candidates),
  ``thoughts`` (reasoning, reported apart) and ``tool`` (toolUsePromptTokenCount, prompt tokens
  of tool use, not in ``input``);
- tool results reach the model as ``functionResponse`` parts: a ``user`` record after the
  ``gemini`` one (0.61.0), or only ``toolCalls[].result`` (older builds), which the CLI sends
  as a ``<id>_response`` message on resume;
- a sub-agent (``invoke_agent``) records its own chat in ``chats/<parent sessionId>/<id>.jsonl``,
  the parent's tool call naming it in ``agentId``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxtop.engine.files import read_head
from ctxtop.engine.paths import is_plain_name
from ctxtop.engine.sessions.adapter import (
    CERTAIN,
    LIKELY,
    NOT_MINE,
    Adapter,
    logs_tokens,
    token_count,
)
from ctxtop.engine.sessions.model import Block, Compaction, Message, SessionState, Usage

_MESSAGE_TYPES = {"user", "gemini", "info", "error", "warning"}
# What the model is sent; info/error/warning records are for the user's screen only.
_MODEL_TYPES = {"user", "gemini"}
# Chat compression replaces the history with a summary that opens with this tag
# (chatCompressionService.ts: "Generate a new <state_snapshot> ...").
SNAPSHOT_TAG = "<state_snapshot>"
SESSION_CONTEXT_TAG = "<session_context>"
# ``{"$set":{"lastUpdated":"<ISO time>"}}``, written after every message (recordMessage).
_BARE_UPDATE = b'{"$set":{"lastUpdated":'
_BARE_UPDATE_MAX = 64
# Auto-compression rule, Gemini CLI 0.61.0 ``ChatCompressionService.compress``
# (packages/core/src/context/chatCompressionService.ts, read in the npm bundle): the history is
# compressed when the last prompt's token count reaches ``threshold * tokenLimit(model)``, the
# threshold being settings ``model.compressionThreshold``, else an experiment flag (fetched with
# a Code Assist sign-in, or read from a GEMINI_EXP file; google-gemini/gemini-cli#23906 plans 0.2
# there), else DEFAULT_COMPRESSION_TOKEN_THRESHOLD.
DEFAULT_COMPRESSION_THRESHOLD = 0.5
# ``tokenLimit(model)`` of Gemini CLI 0.61.0 (its bundle's ``tokenLimit``): 256,000 for the
# Gemma 4 models, 1,048,576 (also ``DEFAULT_TOKEN_LIMIT``) for every other; the window it
# compresses against.
CLI_TOKEN_LIMIT = 1_048_576
CLI_GEMMA_4_LIMIT = 256_000
CLI_GEMMA_4_MODELS = ("gemma-4-31b-it", "gemma-4-26b-a4b-it")


_TOKEN_KEYS = ("input", "output", "cached", "thoughts", "tool")


def usage_from(tokens: Mapping[str, Any]) -> Usage | None:
    """Gemini ``tokens`` → ``Usage`` (None if a count is not a number).

    ``input`` includes the cached part, so it is split off; ``tool`` is prompt too;
    ``thoughts`` is output the API reports apart, so it is added to output.
    """
    counts = []
    for name in _TOKEN_KEYS:
        value = token_count(tokens.get(name) or 0)  # bool and str are malformed; float is rare
        if value is None:
            return None
        counts.append(value)
    prompt, output, cached, thoughts, tool = counts
    return Usage(
        input_tokens=max(prompt - cached, 0) + tool,
        output_tokens=output + thoughts,
        cache_read_tokens=cached,
        reasoning_tokens=thoughts,
    )


def response_text(response: Any) -> str:
    """What a ``functionResponse.response`` tells the model: its output (or error) text."""
    if isinstance(response, dict):
        for name in ("output", "error"):
            value = response.get(name)
            if isinstance(value, str):
                return value
    if isinstance(response, str):
        return response
    return json.dumps(response, ensure_ascii=False)


def _result_parts(result: Any, call_id: str, name: str) -> list[Mapping[str, Any]]:
    """``toolCalls[].result`` as ``functionResponse`` parts (a string result is its output)."""
    if isinstance(result, str):
        return [{"functionResponse": {"id": call_id, "name": name, "response": {"output": result}}}]
    if isinstance(result, list):
        return [part for part in result if isinstance(part, dict)]
    if isinstance(result, dict):
        return [result]
    return []


def blocks_from_parts(
    state: SessionState, content: Any, failed: set[str] | None = None, line: int = 0
) -> list[Block]:
    """Gemini ``Part``s → blocks, registering calls and results on ``state`` on the way
    (``failed``: the ids of calls whose results are errors; ``line``: where the calls are)."""
    if isinstance(content, str):
        return [Block("text", content)] if content else []
    blocks: list[Block] = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, str):
            blocks.append(Block("text", part))
            continue
        if not isinstance(part, dict):
            continue
        call, result = part.get("functionCall"), part.get("functionResponse")
        if isinstance(part.get("text"), str):
            blocks.append(Block("thinking" if part.get("thought") else "text", part["text"]))
        elif isinstance(call, dict):
            call_id = str(call.get("id") or "")
            name = str(call.get("name") or "unknown")
            if call_id:
                state.record_tool_call(call_id, name, line=line, raw_input=call.get("args"))
            blocks.append(Block("tool_use", "", call_id or None, name, raw=call.get("args")))
        elif isinstance(result, dict):
            call_id = str(result.get("id") or "")
            text = response_text(result.get("response"))
            error = call_id in (failed or ()) or (
                isinstance(result.get("response"), dict) and "error" in result["response"]
            )
            if call_id:
                if call_id not in state.tools:
                    state.record_tool_call(call_id, str(result.get("name") or "unknown"))
                state.record_tool_result(call_id, text, is_error=error)
            blocks.append(Block("tool_result", text, call_id or None, is_error=error))
        elif "inlineData" in part or "fileData" in part:
            blocks.append(Block("image"))
        else:
            blocks.append(Block("other", raw=part))
    return blocks


class _Window:
    """One chat (the main session or a sub-agent) and the logic to feed its records."""

    def __init__(self, state: SessionState) -> None:
        self.state = state
        self.position: dict[str, int] = {}  # message id → index in state.context
        self.result_messages: dict[str, str] = {}  # call id → id of the message with its result
        self.synthetic: set[str] = set()  # ids of ``<id>_response`` messages made from toolCalls

    # -- the context as an ordered map of messages -------------------------------------------

    def _put(self, message: Message) -> None:
        index = self.position.get(message.id)
        if index is None:
            self.position[message.id] = len(self.state.context)
            self.state.context.append(message)
        else:
            self.state.context[index] = message

    def _remove(self, message_id: str) -> None:
        index = self.position.pop(message_id, None)
        if index is None:
            return
        context = self.state.context
        del context[index]
        for later in range(index, len(context)):
            self.position[context[later].id] = later

    def _clear(self) -> None:
        self.state.context.clear()
        self.position.clear()
        self.result_messages.clear()
        self.synthetic.clear()

    def rewind(self, message_id: str) -> None:
        """Drop ``message_id`` and every later message (all of them if it is unknown)."""
        index = self.position.get(message_id, 0)
        for dropped in self.state.context[index:]:
            self.position.pop(dropped.id, None)
        del self.state.context[index:]
        self._reset_last_response()

    def _reset_last_response(self) -> None:
        state = self.state
        for message in reversed(state.context):
            if message.response_key is not None and message.response_key in state.responses:
                state.last_response = state.responses[message.response_key]
                return
        state.last_response = None

    # -- records -----------------------------------------------------------------------------

    def replace_history(self, messages: list[Any], line: int, timestamp: str | None) -> None:
        """A ``$set`` of ``messages``: the history from now on (a compression if it brings a
        new ``<state_snapshot>`` summary)."""
        before = set(self.position)
        previous = self.state.last_response
        self.state.keep_context()
        self._clear()
        summary = False
        for raw in messages:
            if isinstance(raw, dict) and isinstance(raw.get("id"), str):
                message = self.message(raw, line)
                if message is not None and message.kind == "compact_summary":
                    summary = summary or message.id not in before
        self._reset_last_response()
        if summary:
            self.state.record_compaction(
                Compaction(
                    trigger="unknown",  # auto or /compress: the log does not say
                    # the CLI compares the last prompt's size with its threshold
                    pre_tokens=previous.usage.input_tokens_total if previous else None,
                    line=line,
                    timestamp=timestamp,
                )
            )

    def message(self, record: Mapping[str, Any], line: int) -> Message | None:
        """Apply one message record; returns the message put on the context (if any)."""
        state = self.state
        kind = record.get("type")
        message_id = str(record["id"])
        timestamp = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
        state.touch(timestamp)
        if kind not in _MESSAGE_TYPES:
            state.unknown_type(kind)  # a record type of a newer release
            return None
        content = record.get("content")
        if content is not None and not isinstance(content, str | list):
            state.skip(line, f"{kind} message {message_id[:12]} whose content is not text or parts")
            return None
        if kind not in _MODEL_TYPES:
            state.ignore_type(str(kind))  # for the user's screen only
            return None
        if kind == "user":
            message = self._user(record, message_id, line, timestamp)
        else:
            message = self._gemini(record, message_id, line, timestamp)
        if message is not None:
            if message_id in state.responses:  # a copy of an answered message (history $set)
                message.response_key = message_id
            self._put(message)
            self._usage(record, message, line, timestamp)
            if kind == "gemini" and isinstance(record.get("toolCalls"), list):
                self._tool_call_results(message_id, record["toolCalls"], line, timestamp)
        return message

    def _user(
        self, record: Mapping[str, Any], message_id: str, line: int, ts: str | None
    ) -> Message:
        blocks = blocks_from_parts(self.state, record.get("content"))
        results = [block.tool_call_id for block in blocks if block.kind == "tool_result"]
        for call_id in results:
            assert call_id is not None
            # The CLI's own record of these results supersedes one made from toolCalls.
            earlier = self.result_messages.get(call_id)
            if earlier is not None and earlier != message_id and earlier in self.synthetic:
                self.synthetic.discard(earlier)
                self._remove(earlier)
            self.result_messages[call_id] = message_id
        label = "message"
        first = blocks[0].text if blocks and blocks[0].kind == "text" else ""
        if first.startswith(SNAPSHOT_TAG):
            label = "compact_summary"
        elif first.startswith(SESSION_CONTEXT_TAG):
            label = "instructions"
        return Message(message_id, "user", blocks, line, ts, kind=label)

    def _gemini(
        self, record: Mapping[str, Any], message_id: str, line: int, ts: str | None
    ) -> Message:
        parts = blocks_from_parts(self.state, record.get("content"))
        tool_calls = record.get("toolCalls")
        tool_calls = tool_calls if isinstance(tool_calls, list) else []
        blocks: list[Block] = []
        # The CLI's history conversion: parts already holding calls or thoughts are sent as
        # they are; otherwise thoughts first, then the content, then one call per toolCalls.
        if any(block.kind in ("tool_use", "thinking") for block in parts):
            blocks = parts
        else:
            thoughts = record.get("thoughts")
            for thought in thoughts if isinstance(thoughts, list) else []:
                if isinstance(thought, dict):
                    subject, text = thought.get("subject"), str(thought.get("description") or "")
                    blocks.append(Block("thinking", f"**{subject}** {text}" if subject else text))
            blocks.extend(parts)
            for call in tool_calls:
                if isinstance(call, dict) and isinstance(call.get("id"), str):
                    name = str(call.get("name") or "unknown")
                    self.state.record_tool_call(
                        call["id"], name, line=line, raw_input=call.get("args")
                    )
                    blocks.append(Block("tool_use", "", call["id"], name, raw=call.get("args")))
        return Message(message_id, "assistant", blocks, line, ts)

    def _tool_call_results(
        self, message_id: str, tool_calls: list[Any], line: int, ts: str | None
    ) -> None:
        """Results kept in ``toolCalls``: counted, and on the context as ``<id>_response`` until
        (or unless) the CLI's own ``user`` record of them arrives."""
        parts: list[Mapping[str, Any]] = []
        failed: set[str] = set()
        for call in tool_calls:
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                name = str(call.get("name") or "unknown")
                parts.extend(_result_parts(call.get("result"), call["id"], name))
                if call.get("status") == "error":
                    failed.add(call["id"])
        if not parts:
            return
        synthetic_id = f"{message_id}_response"
        blocks = blocks_from_parts(self.state, parts, failed)
        pending = [
            block
            for block in blocks
            if block.kind == "tool_result"
            and self.result_messages.get(block.tool_call_id or "", synthetic_id) == synthetic_id
        ]
        if not pending:
            return
        for block in pending:
            self.result_messages[block.tool_call_id or ""] = synthetic_id
        self.synthetic.add(synthetic_id)
        self._put(Message(synthetic_id, "user", pending, line, ts))

    def _usage(
        self, record: Mapping[str, Any], message: Message, line: int, ts: str | None
    ) -> None:
        tokens = record.get("tokens")
        if tokens is None or record.get("type") != "gemini":
            return
        usage = usage_from(tokens) if isinstance(tokens, dict) else None
        if usage is None:
            self.state.skip(line, f"gemini message {message.id[:12]} with malformed tokens")
            return
        if not logs_tokens(tokens, _TOKEN_KEYS):
            return
        model = record.get("model")
        message.response_key = message.id
        last = self.state.last_response
        newest = not self.state.context or self.state.context[-1] is message
        self.state.record_response(
            message.id,
            usage,
            model=model if isinstance(model, str) else None,
            line=line,
            timestamp=ts,
            on_context=newest or last is None or last.key == message.id,
        )


def _shape(record: Mapping[str, Any]) -> str:
    """A name for a record of no known shape: its type, else its first keys."""
    kind = record.get("type")
    return kind if isinstance(kind, str) else "{" + ", ".join(list(record)[:3]) + "}"


def _is_metadata(record: Mapping[str, Any]) -> bool:
    return isinstance(record.get("sessionId"), str) and isinstance(record.get("projectHash"), str)


class GeminiCliAdapter(Adapter):
    agent = "gemini-cli"
    label = "Gemini CLI"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._main = _Window(self.state)
        self._windows: dict[Path, _Window] = {}
        self._agent_calls: dict[str, tuple[str, str | None]] = {}  # agent id → (call id, name)
        self._companions: list[Path] = []

    @classmethod
    def detect(cls, head: Sequence[Any]) -> int:
        score = NOT_MINE
        for record in head:
            if not isinstance(record, dict):
                continue
            if _is_metadata(record):
                return CERTAIN
            if record.get("type") == "gemini" and isinstance(record.get("id"), str):
                return CERTAIN
            if isinstance(record.get("$set"), dict) or isinstance(record.get("$rewindTo"), str):
                score = LIKELY
        return score

    def ignores(self, raw: bytes) -> bool:
        # Half the lines only move ``lastUpdated``; messages carry their own timestamps.
        return len(raw) < _BARE_UPDATE_MAX and raw.startswith(_BARE_UPDATE)

    def feed(self, record: Any, line: int) -> None:
        self._feed(self._main, record, line)

    def _feed(self, window: _Window, record: Any, line: int) -> None:
        # A sub-agent's state has its own file as path: its skipped lines name that file.
        state = window.state
        if not isinstance(record, dict):
            state.skip(line, "not a JSON object")
            return
        if "$rewindTo" in record:
            target = record["$rewindTo"]
            if isinstance(target, str):
                window.rewind(target)
            else:
                state.skip(line, "$rewindTo without a message id")
        elif "$set" in record:
            self._patch(window, record["$set"], line)
        elif isinstance(record.get("id"), str):
            window.message(record, line)
            if window is self._main and record.get("type") == "gemini":
                self._note_agent_calls(record)
        elif _is_metadata(record):
            self._metadata(window, record, line)
        else:
            state.unknown_type(_shape(record))

    def _patch(self, window: _Window, patch: Any, line: int) -> None:
        state = window.state
        if not isinstance(patch, dict):
            state.skip(line, "$set whose value is not an object")
            return
        updated = patch.get("lastUpdated")
        timestamp = updated if isinstance(updated, str) else None
        state.touch(timestamp)
        if isinstance(patch.get("sessionId"), str) and state.session_id is None:
            state.session_id = patch["sessionId"]
        if isinstance(patch.get("summary"), str) and window is self._main:
            state.title = patch["summary"]
        if "messages" in patch:
            if isinstance(patch["messages"], list):
                window.replace_history(patch["messages"], line, timestamp)
            else:
                state.skip(line, "$set of messages that is not a list")

    def _metadata(self, window: _Window, record: Mapping[str, Any], line: int) -> None:
        state = window.state
        if window is self._main and state.session_id is None:
            state.session_id = record["sessionId"]
            state.cwd = _project_root(self.path)
        state.touch(record.get("startTime") if isinstance(record.get("startTime"), str) else None)
        if isinstance(record.get("summary"), str) and window is self._main:
            state.title = record["summary"]
        directories = record.get("directories")
        if isinstance(directories, list) and directories and isinstance(directories[0], str):
            state.cwd = directories[0]
        # Legacy single-document sessions carry the whole history here.
        if isinstance(record.get("messages"), list):
            for raw in record["messages"]:
                if isinstance(raw, dict) and isinstance(raw.get("id"), str):
                    window.message(raw, line)

    # -- sub-agents ----------------------------------------------------------------------------

    def _note_agent_calls(self, record: Mapping[str, Any]) -> None:
        calls = record.get("toolCalls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict) and isinstance(call.get("agentId"), str):
                args = call.get("args")
                name = args.get("agent_name") if isinstance(args, dict) else None
                entry = (str(call.get("id")), name if isinstance(name, str) else None)
                self._agent_calls[call["agentId"]] = entry
                child = self.state.subagents.get(call["agentId"])
                if child is not None:
                    child.parent_tool_call_id, child.description = entry

    def companions(self) -> list[Path]:
        session_id = self.state.session_id
        if session_id is None or not self._companion_scan_due():
            return self._companions
        if not is_plain_name(session_id):  # from the log: "../x" or "/x" would lead elsewhere
            return self._companions
        directory = self.path.parent / session_id
        if directory.is_dir():
            self._companions = sorted(directory.glob("*.jsonl"))
        return self._companions

    def feed_companion(self, path: Path, record: Any, line: int) -> None:
        window = self._windows.get(path)
        if window is None:
            agent_id = path.stem
            child = self.state.subagent(agent_id, path)
            if agent_id in self._agent_calls:
                child.parent_tool_call_id, child.description = self._agent_calls[agent_id]
            window = self._windows[path] = _Window(child)
        self._feed(window, record, line)

    # -- agent facts ---------------------------------------------------------------------------

    def autocompact_at(self, context_window: int) -> int | None:
        """Gemini CLI compresses when the last prompt reaches ``threshold * window``; the user's
        ``model.compressionThreshold`` in the settings.json of the ``.gemini`` directory that
        holds this session replaces the default 0.5 (a remote experiment flag may too: not seen
        from here)."""
        threshold = _settings_threshold(self.path) or DEFAULT_COMPRESSION_THRESHOLD
        return math.ceil(threshold * context_window)

    @classmethod
    def cli_window(cls, model: str | None) -> int | None:
        """Gemini CLI's own ``tokenLimit`` (see ``CLI_TOKEN_LIMIT``)."""
        return CLI_GEMMA_4_LIMIT if model in CLI_GEMMA_4_MODELS else CLI_TOKEN_LIMIT


def _project_root(session: Path) -> str | None:
    """The project directory, from ``tmp/<project>/.project_root`` beside ``chats/``."""
    try:
        raw = read_head(session.parent.parent / ".project_root", 4096)
    except OSError:
        return None
    text = raw.decode("utf-8", "replace").strip()
    return text or None


def _settings_threshold(session: Path) -> float | None:
    """``model.compressionThreshold`` from the settings.json of the ``.gemini`` directory whose
    ``tmp/<project>/chats/`` holds the session."""
    for parent in session.parents:
        if parent.name == "chats" and parent.parent.parent.name == "tmp":
            settings = parent.parent.parent.parent / "settings.json"
            break
    else:
        return None
    try:
        data = read_head(settings, 1 << 20)
    except OSError:
        return None
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    model = document.get("model") if isinstance(document, dict) else None
    value = model.get("compressionThreshold") if isinstance(model, dict) else None
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= 1:
        return float(value)
    return None


__all__ = ["GeminiCliAdapter", "blocks_from_parts", "usage_from"]

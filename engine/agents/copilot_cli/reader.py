"""GitHub Copilot CLI event logs: ``~/.copilot/session-state/<sessionId>/events.jsonl``.

The rules followed here are in ../shared/docs/agent-log-formats.md §4 (event names from
copilot-sdk's generated ``session-events.ts``), checked against logs the real 1.0.102 binary
wrote (tests/sessions/data/generated/copilot-cli):

- every line is an event ``{type, data, id, timestamp, parentId, agentId?}``; events of a
  sub-agent carry its ``agentId`` and ``subagent.started`` names the parent's tool call;
- ``session.usage_record`` (``data.usage``) is written once per API call, keyed by
  ``apiCallId``, before the ``assistant.message`` of that call; ``inputTokens`` is the whole
  prompt (cache reads and writes included), ``initiator: "sub-agent"`` marks a sub-agent's call;
  ``maxPromptTokens`` is the prompt budget the CLI compacts against (``tokenLimit`` in the
  compaction events);
- ``system.message``, ``user.message`` (``transformedContent`` is what the model gets),
  ``assistant.message`` (``toolRequests``) and ``tool.execution_complete`` (``result.content``)
  are the conversation;
- 1.0.3x (no ``session.usage_record``; checked against a log the real 1.0.34 binary wrote,
  tests/sessions/data/generated/copilot-cli-1.0.34): each API call's answer is one
  ``assistant.message`` with its ``outputTokens`` (and ``requestId`` when the provider sent
  one), the prompt tokens only as the process's sums in ``session.shutdown.modelMetrics``
  (sub-agents' calls included). Those requests are counted with their output, the sums added to
  the totals; no request of theirs gives a context figure (its prompt is not logged);
- 1.0.3x's ``session.compaction_complete`` has no ``messagesRemoved``: its summary replaces
  every message before it;
- ``system.message`` is logged again before each process's first turn: the prompt has one
  system message, the newest;
- ``session.usage_info``, ``session.compaction_start`` and ``session.shutdown`` carry the CLI's
  own sizes: ``systemTokens`` (the system message, also logged as ``system.message``),
  ``toolDefinitionsTokens`` and ``currentTokens`` (their sum with ``conversationTokens``: the
  whole context as the CLI counts it). When no request logged its prompt (1.0.3x), ctxtop
  takes the tool definitions (and the system prompt when no message holds it) and the context
  from them;
- ``session.truncation`` drops the oldest messages of a prompt over the limit;
  ``session.compaction_complete`` replaces the ``messagesRemoved`` oldest messages of the history
  as it was at ``session.compaction_start`` with ``summaryContent``, keeping what came after.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxtop.engine.sessions.adapter import CERTAIN, LIKELY, NOT_MINE, Adapter, token_count
from ctxtop.engine.sessions.model import Block, Compaction, Message, SessionState, Truncation, Usage
from ctxtop.engine.sessions.prompt_parts import AgentCounts

PRODUCER = "copilot-agent"
# Event types only Copilot CLI writes (copilot-sdk session-events.ts).
_COPILOT_TYPES = {
    "session.start",
    "session.resume",
    "session.usage_record",
    "assistant.turn_start",
    "assistant.turn_end",
    "assistant.message",
    "tool.execution_start",
    "tool.execution_complete",
    "subagent.started",
    "session.compaction_complete",
}
# Event types read elsewhere than in ``_HANDLERS``' events, or known to carry nothing ctxtop shows:
# the 1.0.34 ``schemas/session-events.schema.json`` and what 1.0.102 wrote. Not among them:
# ``session.snapshot_rewind`` (a rewind ctxtop does not follow: shown as not understood).
_IGNORED_TYPES = frozenset(
    {
        "abort",
        "assistant.intent",
        "assistant.message_delta",
        "assistant.reasoning_delta",
        "assistant.streaming_delta",
        "assistant.turn_end",
        "assistant.turn_start",
        "capabilities.changed",
        "command.completed",
        "command.execute",
        "command.queued",
        "commands.changed",
        "elicitation.completed",
        "elicitation.requested",
        "exit_plan_mode.completed",
        "exit_plan_mode.requested",
        "external_tool.completed",
        "external_tool.requested",
        "hook.end",
        "hook.start",
        "mcp.oauth_completed",
        "mcp.oauth_required",
        "pending_messages.modified",
        "permission.completed",
        "permission.requested",
        "sampling.completed",
        "sampling.requested",
        "session.background_tasks_changed",
        "session.context_changed",
        "session.custom_agents_updated",
        "session.error",
        "session.extensions_loaded",
        "session.handoff",
        "session.idle",
        "session.info",
        "session.mcp_server_status_changed",
        "session.mcp_servers_loaded",
        "session.mode_changed",
        "session.plan_changed",
        "session.remote_steerable_changed",
        "session.skills_loaded",
        "session.task_complete",
        "session.title_changed",
        "session.tools_updated",
        "session.warning",
        "session.workspace_file_changed",
        "skill.invoked",
        "subagent.completed",
        "subagent.configured",
        "subagent.deselected",
        "subagent.failed",
        "subagent.selected",
        "system.notification",
        "tool.execution_partial_result",
        "tool.execution_progress",
        "tool.user_requested",
        "user_input.completed",
        "user_input.requested",
    }
)
# Auto-compaction rule, GitHub docs "Managing context in Copilot CLI" (github/docs
# content/copilot/concepts/agents/copilot-cli/context-management.md): compaction starts in the
# background at about 80% of the context window (and the CLI waits for it at about 95%).
AUTOCOMPACT_FRACTION = 0.8
SUBAGENT_INITIATOR = "sub-agent"


def _number(raw: Mapping[str, Any], name: str) -> int | None:
    return token_count(raw.get(name))


def usage_from(raw: Mapping[str, Any]) -> Usage | None:
    """Copilot usage → ``Usage`` (None without a prompt count): ``inputTokens`` is the whole
    prompt, so the cached parts are taken out of it to leave the uncached input."""
    prompt = _number(raw, "inputTokens")
    if prompt is None:
        return None
    read = _number(raw, "cacheReadTokens") or 0
    write = _number(raw, "cacheWriteTokens") or 0
    return Usage(
        input_tokens=max(prompt - read - write, 0),
        output_tokens=_number(raw, "outputTokens") or 0,
        cache_read_tokens=read,
        cache_write_tokens=write,
        # Shown for display only: whether outputTokens includes it depends on the provider.
        reasoning_tokens=_number(raw, "reasoningTokens") or 0,
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


class _Window:
    """One context (the main agent or a sub-agent): messages, responses, compactions."""

    def __init__(self, state: SessionState) -> None:
        self.state = state
        self.compaction_starts: dict[str, list[str]] = {}  # attempt id → message ids then
        # The usage record comes before the message of its call: the message's place is kept
        # from then on (api call id → message), so the reported figure applies at once.
        self.answers: dict[str, Message] = {}

    def append(self, message: Message) -> None:
        self.state.context.append(message)

    def drop_oldest(self, message_ids: set[str]) -> int:
        """Remove these messages; returns the index where the first one was (or after system)."""
        context = self.state.context
        first = next((i for i, m in enumerate(context) if m.role != "system"), len(context))
        for index, message in enumerate(context):
            if message.id in message_ids:
                first = min(first, index)
        context[:] = [message for message in context if message.id not in message_ids]
        return first

    def all_but_newest(self, keep: int, among: list[str] | None = None) -> set[str]:
        """Ids of the non-system messages (of ``among``, else of the context) but the newest
        ``keep``: the CLI's counts of what it kept, applied from the new end, where our message
        list and its own agree best (it counts the start of the history a little differently)."""
        if among is None:
            among = [m.id for m in self.state.context if m.role != "system"]
        return set(among[: max(len(among) - max(keep, 0), 0)])

    def reset_last_response(self) -> None:
        state = self.state
        if state.last_response is None:
            return
        if any(m.response_key == state.last_response.key for m in state.context):
            return
        state.last_response = None


class CopilotCliAdapter(Adapter):
    agent = "copilot-cli"
    label = "Copilot CLI"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._main = _Window(self.state)
        self._windows: dict[str, _Window] = {}
        # This process's (since session.start or .resume) usage records, and answers counted
        # without one (1.0.3x), by their request or message id.
        self._process_records = 0
        self._process_answers: set[str] = set()

    @classmethod
    def detect(cls, head: Sequence[Any]) -> int:
        score = NOT_MINE
        for record in head:
            if not isinstance(record, dict) or not isinstance(record.get("type"), str):
                continue
            data = record.get("data")
            if not isinstance(data, dict) or "parentId" not in record:
                continue
            if data.get("producer") == PRODUCER or record["type"] in _COPILOT_TYPES:
                return CERTAIN
            if "." in record["type"]:
                score = LIKELY
        return score

    # -- feeding -------------------------------------------------------------------------------

    def feed(self, record: Any, line: int) -> None:
        if not isinstance(record, dict):
            self.state.skip(line, "not a JSON object")
            return
        kind = record.get("type")
        data = record.get("data")
        if not isinstance(kind, str) or kind not in _HANDLERS:
            if kind in _IGNORED_TYPES:
                self.state.ignore_type(kind)
            else:
                self.state.unknown_type(kind)
            return
        if not isinstance(data, dict):
            self.state.skip(line, f"{kind} event without data")
            return
        timestamp = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
        event_id = str(record.get("id") or f"L{line}")
        agent_id = record.get("agentId")
        window = self._window(agent_id) if isinstance(agent_id, str) else self._main
        handler = _HANDLERS.get(kind)
        if handler is not None:
            window.state.touch(timestamp)
            handler(self, window, data, event_id, line, timestamp)

    def _window(self, agent_id: str) -> _Window:
        window = self._windows.get(agent_id)
        if window is None:
            window = self._windows[agent_id] = _Window(self.state.subagent(agent_id))
        return window

    def _session(
        self, window: _Window, data: Mapping[str, Any], event_id: str, line: int, ts: str | None
    ) -> None:
        state = window.state
        self._process_records = 0
        self._process_answers = set()
        if isinstance(data.get("sessionId"), str) and state.session_id is None:
            state.session_id = data["sessionId"]
        if isinstance(data.get("copilotVersion"), str):
            state.agent_version = data["copilotVersion"]
        if isinstance(data.get("selectedModel"), str):
            state.model = data["selectedModel"]
        context = data.get("context")
        if isinstance(context, dict) and isinstance(context.get("cwd"), str):
            state.cwd = context["cwd"]

    def _model_change(
        self, window: _Window, data: Mapping[str, Any], event_id: str, line: int, ts: str | None
    ) -> None:
        if isinstance(data.get("newModel"), str):
            window.state.model = data["newModel"]

    def _subagent_started(
        self, window: _Window, data: Mapping[str, Any], event_id: str, line: int, ts: str | None
    ) -> None:
        state = window.state
        if window is self._main:
            return  # only a sub-agent's own event (with its agentId) describes it
        if isinstance(data.get("toolCallId"), str):
            state.parent_tool_call_id = data["toolCallId"]
        name = data.get("agentDisplayName") or data.get("agentName")
        description = data.get("agentDescription")
        if isinstance(name, str):
            state.description = f"{name}: {description}" if isinstance(description, str) else name
        if isinstance(data.get("model"), str):
            state.model = data["model"]

    def _system(
        self, window: _Window, data: Mapping[str, Any], event_id: str, line: int, ts: str | None
    ) -> None:
        text = _text(data.get("content"))
        message = Message(event_id, "system", [Block("text", text)], line, ts, kind="instructions")
        context = window.state.context
        for index, known in enumerate(context):
            if known.kind == "instructions":
                context[index] = message  # logged again for a new process: still one prompt
                return
        window.append(message)

    def _user(
        self, window: _Window, data: Mapping[str, Any], event_id: str, line: int, ts: str | None
    ) -> None:
        text = _text(data.get("transformedContent")) or _text(data.get("content"))
        blocks = [Block("text", text)] if text else []
        attachments = data.get("attachments")
        for attachment in attachments if isinstance(attachments, list) else []:
            blocks.append(Block("other", raw=attachment))
        window.append(Message(event_id, "user", blocks, line, ts))

    def _assistant(
        self, window: _Window, data: Mapping[str, Any], event_id: str, line: int, ts: str | None
    ) -> None:
        state = window.state
        blocks: list[Block] = []
        reasoning = _text(data.get("reasoningText"))
        if reasoning:
            blocks.append(Block("thinking", reasoning))
        text = _text(data.get("content"))
        if text:
            blocks.append(Block("text", text))
        requests = data.get("toolRequests")
        for request in requests if isinstance(requests, list) else []:
            if isinstance(request, dict) and isinstance(request.get("toolCallId"), str):
                call_id, name = request["toolCallId"], str(request.get("name") or "unknown")
                state.record_tool_call(call_id, name, line=line, raw_input=request.get("arguments"))
                blocks.append(Block("tool_use", "", call_id, name, raw=request.get("arguments")))
        if isinstance(data.get("model"), str):
            state.model = data["model"]
        api_call = data.get("apiCallId")
        output = _number(data, "outputTokens")
        if api_call is None and output is not None and not self._process_records:
            answer = data.get("requestId") or data.get("messageId") or event_id
            if answer not in self._process_answers:
                self._process_answers.add(str(answer))
                state.record_unitemised(Usage(output_tokens=output), requests=1)
        waiting = window.answers.pop(api_call, None) if isinstance(api_call, str) else None
        if waiting is not None and any(m is waiting for m in state.context[-4:]):
            waiting.id, waiting.blocks, waiting.line, waiting.timestamp = event_id, blocks, line, ts
            return
        message = Message(event_id, "assistant", blocks, line, ts)
        if isinstance(api_call, str):
            message.response_key = api_call
        window.append(message)

    def _reasoning(
        self, window: _Window, data: Mapping[str, Any], event_id: str, line: int, ts: str | None
    ) -> None:
        text = _text(data.get("content"))
        if text:
            window.append(Message(event_id, "assistant", [Block("thinking", text)], line, ts))

    def _tool_start(
        self, window: _Window, data: Mapping[str, Any], event_id: str, line: int, ts: str | None
    ) -> None:
        call_id = data.get("toolCallId")
        if not isinstance(call_id, str):
            window.state.skip(line, "tool.execution_start without a toolCallId")
            return
        name = str(data.get("toolName") or "unknown")
        window.state.record_tool_call(call_id, name, line=line, raw_input=data.get("arguments"))

    def _tool_complete(
        self, window: _Window, data: Mapping[str, Any], event_id: str, line: int, ts: str | None
    ) -> None:
        call_id = data.get("toolCallId")
        if not isinstance(call_id, str):
            window.state.skip(line, "tool.execution_complete without a toolCallId")
            return
        result, error = data.get("result"), data.get("error")
        text = _text(result.get("content")) if isinstance(result, dict) else _text(result)
        if not text and isinstance(error, dict):
            text = _text(error.get("message"))
        elif not text:
            text = _text(error)
        failed = data.get("success") is False
        window.state.record_tool_result(call_id, text, is_error=failed)
        block = Block("tool_result", text, call_id, is_error=failed)
        window.append(Message(event_id, "tool", [block], line, ts))

    def _usage(
        self, window: _Window, data: Mapping[str, Any], event_id: str, line: int, ts: str | None
    ) -> None:
        raw = data.get("usage", data)  # assistant.usage carries the fields in data itself
        self._process_records += 1
        usage = usage_from(raw) if isinstance(raw, dict) else None
        if usage is None or not isinstance(raw, dict):
            window.state.skip(line, "usage record without inputTokens")
            return
        if window is self._main and raw.get("initiator") == SUBAGENT_INITIATOR:
            # A sub-agent's call logged without its agentId: still never the parent's.
            parent_call = raw.get("parentToolCallId")
            window = self._window(parent_call if isinstance(parent_call, str) else "sub-agent")
        accounting = raw.get("accounting")
        key = raw.get("apiCallId") or (
            accounting.get("usageId") if isinstance(accounting, dict) else None
        )
        key = str(key or raw.get("providerCallId") or event_id)
        limit = _number(raw, "maxPromptTokens")
        if limit:
            window.state.context_window = limit
        model = raw.get("model")
        window.state.record_response(
            key, usage, model=model if isinstance(model, str) else None, line=line, timestamp=ts
        )
        if key not in window.answers and not any(
            m.response_key == key for m in window.state.context[-4:]
        ):
            answer = Message(f"answer-{key}", "assistant", [], line, ts, response_key=key)
            window.answers[key] = answer
            window.append(answer)

    def _sizes(
        self, window: _Window, data: Mapping[str, Any], event_id: str, line: int, ts: str | None
    ) -> None:
        """The CLI's own sizes of the prompt (``session.usage_info`` and the events that carry
        them too): its count, kept as logged."""
        state = window.state
        tools = _number(data, "toolDefinitionsTokens")
        system = _number(data, "systemTokens")
        if tools is None and system is None:
            return
        held = any(m.kind == "instructions" for m in state.context)
        outside = (tools or 0) + (0 if held else system or 0)
        state.agent_counts = AgentCounts(outside, _number(data, "currentTokens"), line)

    def _forget_context_size(self, window: _Window) -> None:
        """The context was rewritten: the CLI's last count of it no longer applies."""
        counts = window.state.agent_counts
        if counts is not None and counts.context is not None:
            window.state.agent_counts = AgentCounts(counts.outside_messages, None, counts.line)

    def _shutdown(
        self, window: _Window, data: Mapping[str, Any], event_id: str, line: int, ts: str | None
    ) -> None:
        """A process ends: with answers counted without usage records (1.0.3x), its prompt
        tokens come as sums per model; they go to the totals (the output was counted)."""
        self._sizes(window, data, event_id, line, ts)
        answers, self._process_answers = self._process_answers, set()
        if self._process_records or not answers:
            return
        metrics = data.get("modelMetrics")
        for figures in metrics.values() if isinstance(metrics, dict) else ():
            raw = figures.get("usage") if isinstance(figures, dict) else None
            usage = usage_from(raw) if isinstance(raw, dict) else None
            if usage is None:
                self.state.skip(line, "session.shutdown model usage without inputTokens")
                continue
            usage.output_tokens = usage.reasoning_tokens = 0  # counted per answer
            self.state.record_unitemised(usage)

    def compacting(self) -> bool:
        """A ``session.compaction_start`` of the main window without its ``_complete`` yet."""
        return bool(self._main.compaction_starts)

    def _compaction_start(
        self, window: _Window, data: Mapping[str, Any], event_id: str, line: int, ts: str | None
    ) -> None:
        attempt = str(data.get("compactionAttemptId") or "")
        window.compaction_starts[attempt] = [
            m.id for m in window.state.context if m.role != "system"
        ]
        limit = _number(data, "tokenLimit")
        if limit:
            window.state.context_window = limit
        self._sizes(window, data, event_id, line, ts)

    def _compaction_complete(
        self, window: _Window, data: Mapping[str, Any], event_id: str, line: int, ts: str | None
    ) -> None:
        if data.get("success") is False:
            return
        attempt = str(data.get("compactionAttemptId") or "")
        snapshot = window.compaction_starts.pop(attempt, None)
        before = _number(data, "preCompactionMessagesLength")
        removed = _number(data, "messagesRemoved")
        if snapshot is None:
            snapshot = [m.id for m in window.state.context if m.role != "system"]
        window.state.keep_context()
        self._forget_context_size(window)
        if removed is None:
            # 1.0.3x logs no count: its summary replaces the whole history, the messages
            # logged since the compaction started included [OBS the 1.0.34 run's requests].
            at = window.drop_oldest(window.all_but_newest(0))
        else:
            kept = before - removed if before is not None else len(snapshot) - removed
            at = window.drop_oldest(window.all_but_newest(kept, snapshot))
        summary = _text(data.get("summaryContent"))
        message = Message(
            event_id, "user", [Block("text", summary)], line, ts, kind="compact_summary"
        )
        window.state.context.insert(at, message)
        window.reset_last_response()
        trigger = data.get("trigger")
        window.state.record_compaction(
            Compaction(
                trigger="auto" if trigger == "threshold" else str(trigger or "unknown"),
                pre_tokens=_number(data, "preCompactionTokens"),
                post_tokens=_number(data, "postCompactionTokens"),
                line=line,
                timestamp=ts,
            )
        )

    def _truncation(
        self, window: _Window, data: Mapping[str, Any], event_id: str, line: int, ts: str | None
    ) -> None:
        kept = _number(data, "postTruncationMessagesLength")
        if kept is None:
            removed = _number(data, "messagesRemovedDuringTruncation") or 0
            kept = sum(m.role != "system" for m in window.state.context) - removed
        window.state.keep_context()
        self._forget_context_size(window)
        window.drop_oldest(window.all_but_newest(kept))
        window.reset_last_response()
        window.state.record_truncation(
            Truncation(
                pre_tokens=_number(data, "preTruncationTokensInMessages"),
                post_tokens=_number(data, "postTruncationTokensInMessages"),
                messages_removed=_number(data, "messagesRemovedDuringTruncation"),
                token_limit=_number(data, "tokenLimit"),
                line=line,
                timestamp=ts,
            )
        )

    # -- agent facts ---------------------------------------------------------------------------

    def autocompact_at(self, context_window: int) -> int | None:
        return math.floor(context_window * AUTOCOMPACT_FRACTION)


_Handler = Callable[[CopilotCliAdapter, _Window, Mapping[str, Any], str, int, str | None], None]
_HANDLERS: dict[str, _Handler] = {
    "session.start": CopilotCliAdapter._session,
    "session.resume": CopilotCliAdapter._session,
    "session.model_change": CopilotCliAdapter._model_change,
    "subagent.started": CopilotCliAdapter._subagent_started,
    "system.message": CopilotCliAdapter._system,
    "user.message": CopilotCliAdapter._user,
    "assistant.message": CopilotCliAdapter._assistant,
    "assistant.reasoning": CopilotCliAdapter._reasoning,
    "tool.execution_start": CopilotCliAdapter._tool_start,
    "tool.execution_complete": CopilotCliAdapter._tool_complete,
    "session.usage_record": CopilotCliAdapter._usage,
    "assistant.usage": CopilotCliAdapter._usage,
    "session.compaction_start": CopilotCliAdapter._compaction_start,
    "session.compaction_complete": CopilotCliAdapter._compaction_complete,
    "session.truncation": CopilotCliAdapter._truncation,
    "session.shutdown": CopilotCliAdapter._shutdown,
    "session.usage_info": CopilotCliAdapter._sizes,
}

__all__ = ["CopilotCliAdapter", "usage_from"]

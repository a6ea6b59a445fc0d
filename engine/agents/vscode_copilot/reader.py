"""VS Code Copilot Chat sessions: ``User/workspaceStorage/<hash>/chatSessions/<id>.jsonl``.

The rules followed here are VS Code's own (microsoft/vscode ``chat/common/model/``:
``objectMutationLog.ts``, ``chatSessionOperationLog.ts``, ``chatModel.ts``) and the Copilot Chat
extension's (``IResultMetadata`` in ``src/extension/prompt/common/conversation.ts``):

- the file is a mutation log of the session document (mutation_log.py); before VS Code 1.109 a
  session was one ``.json`` document of the same shape, read whole;
- the document's ``requests`` are the user's turns: ``message.text``, ``timestamp`` (epoch ms),
  ``modelId`` (``copilot/<model>``), the ``response`` parts shown in the chat, and since the
  usage API the turn's ``promptTokens`` (the prompt of its last model call, the figure VS Code's
  context-usage widget shows), ``completionTokens`` and ``promptTokenDetails`` (VS Code's own
  share of the prompt by part, ``{category, label, percentageOfPrompt}``); older Copilot Chat
  logged ``result.metadata.promptTokens`` / ``outputTokens`` instead;
- ``result.metadata.toolCallRounds`` are the model calls of the turn (``response`` text,
  ``toolCalls [{id, name, arguments}]``, ``thinking``), ``toolCallResults`` their results by
  call id, ``summary {toolCallRoundId, text}`` Copilot's own compaction of the history;
- ``inputState.selectedModel.metadata.maxInputTokens`` is the selected model's prompt budget.

One usage figure per turn is all the log has: a turn of several model calls is one request here
(its last prompt and its output); no cache figures are logged. When Copilot Chat's debug log of
the session is there (debug_log.py), its model calls are the requests instead, each with its
cache reads: a turn's calls are those that started from its timestamp to the next turn's.

Feeding only replays the log (cost proportional to the line); the requests a line touched are
turned into the session model when the state is next asked for (``snapshot``), so a response
streamed in a hundred small pushes is read once."""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from ctxtop.engine.agents.vscode_copilot.debug_log import ModelCall, debug_log_file, model_call
from ctxtop.engine.agents.vscode_copilot.mutation_log import (
    MutationError,
    MutationLog,
    is_mutation,
)
from ctxtop.engine.agents.vscode_copilot.places import session_files
from ctxtop.engine.sessions.adapter import CERTAIN, LIKELY, NOT_MINE, Adapter, token_count
from ctxtop.engine.sessions.model import Block, Compaction, Message, SessionState, Usage
from ctxtop.engine.sessions.prompt_parts import AgentShares, PromptShare

_MODEL_PREFIX = "copilot/"


def _is_session_document(record: Any) -> bool:
    return (
        type(record) is dict
        and type(record.get("requests")) is list
        and isinstance(record.get("sessionId"), str)
        and ("responderUsername" in record or "requesterUsername" in record)
    )


def _logs_usage(request: Any) -> bool:
    """Whether a request holds its token figures yet (where ``_usage`` reads them)."""
    if not isinstance(request, dict):
        return False
    if request.get("promptTokens") is not None or request.get("completionTokens") is not None:
        return True
    result = request.get("result")
    metadata = result.get("metadata") if isinstance(result, dict) else None
    return isinstance(metadata, dict) and (
        metadata.get("promptTokens") is not None or metadata.get("outputTokens") is not None
    )


def _iso(millis: Any) -> str | None:
    if isinstance(millis, bool) or not isinstance(millis, int | float) or millis <= 0:
        return None
    try:
        moment = datetime.fromtimestamp(millis / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _text_of(value: Any) -> str:
    """The text of a tool result or a rendered part: strings, ``{value}`` / ``{text}`` parts,
    lists of them."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(text for item in value if (text := _text_of(item)))
    if isinstance(value, dict):
        for key in ("value", "text"):
            if isinstance(value.get(key), str):
                return str(value[key])
        return _text_of(value.get("content"))
    return ""


def _thinking(round_: Mapping[str, Any]) -> str:
    thinking = round_.get("thinking")
    if isinstance(thinking, dict):
        return _text_of(thinking.get("text"))
    return ""


class VSCodeCopilotAdapter(Adapter):
    agent = "vscode-copilot-chat"
    label = "VS Code Copilot Chat"
    profile = "copilot"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._log = MutationLog()
        self._spans: list[int] = []  # messages on the context per request, in order
        self._lines: list[int] = []  # the line that last changed each request
        self._usage_lines: dict[int, int] = {}  # the line each request's usage appeared on
        self._dirty_from: int | None = None  # the first request to turn into messages again
        self._rebuild = False  # start the state over (a snapshot, a cut of the requests)
        self._meta_dirty = False
        self._compactions: set[str] = set()
        self._cwd_looked = False
        # The debug log's model calls, by start time (``_call_times`` their times, for bisect).
        self._calls: list[ModelCall] = []
        self._call_times: list[int] = []
        self._call_keys: set[str] = set()
        self._companions: list[Path] = []

    @classmethod
    def detect(cls, head: Sequence[Any]) -> int:
        score = NOT_MINE
        for record in head:
            if _is_session_document(record):
                return CERTAIN
            if not is_mutation(record):
                continue
            value = record.get("v")
            if (
                record["kind"] == 0
                and type(value) is dict
                and "sessionId" in value
                and ("requests" in value or "creationDate" in value)
            ):
                return CERTAIN
            path = record.get("k")
            if type(path) is list and path[:1] == ["requests"]:
                score = LIKELY
        return score

    # -- feeding -------------------------------------------------------------------------------

    def feed(self, record: Any, line: int) -> None:
        if _is_session_document(record):  # an old-style whole ``.json`` document
            record = {"kind": 0, "v": record}
        elif not is_mutation(record):
            if isinstance(record, dict) and "kind" in record:
                self.state.unknown_type(f"kind {record.get('kind')!r}")
            else:
                self.state.skip(line, "not a line of a chat session's mutation log")
            return
        before = len(self._requests())
        try:
            change = self._log.apply(record)
        except MutationError as error:
            self.state.skip(line, str(error))
            return
        self._meta_dirty = True
        requests = self._requests()
        if change.reset:
            self._rebuild = True
            self._lines = [line] * len(requests)
            self._usage_lines = {i: line for i, r in enumerate(requests) if _logs_usage(r)}
            return
        if change.cut is not None:
            first, last = change.cut, len(requests)
            del self._lines[first:]
            self._usage_lines = {i: at for i, at in self._usage_lines.items() if i < first}
            self._rebuild = self._rebuild or first < len(self._spans)
        elif change.request == -1:
            first, last = before, len(requests)
        elif change.request is not None and change.request < len(requests):
            first = change.request
            last = first + 1
            self._lines[first] = line
        else:
            return
        self._lines.extend([line] * (len(requests) - len(self._lines)))
        for index in range(first, last):
            if index not in self._usage_lines and _logs_usage(requests[index]):
                self._usage_lines[index] = line  # (the line a live reader first sees it on)
        if first < len(requests):
            self._dirty(first)

    def _dirty(self, index: int) -> None:
        if self._dirty_from is None or index < self._dirty_from:
            self._dirty_from = index

    # -- the debug log -----------------------------------------------------------------------

    def companions(self) -> list[Path]:
        session_id = self.state.session_id
        if session_id is None or self._companions or not self._companion_scan_due():
            return self._companions
        found = debug_log_file(self.path, session_id)
        self._companions = [found] if found is not None else []
        return self._companions

    def feed_companion(self, path: Path, record: Any, line: int) -> None:
        call = model_call(record)
        if call is None or call.key in self._call_keys:
            return
        self._call_keys.add(call.key)
        at = bisect_left(self._call_times, call.millis)
        self._call_times.insert(at, call.millis)
        self._calls.insert(at, call)
        if self._rebuild:  # (a cold read: the first call already starts the state over)
            return
        turn = self._turn_at(call.millis)
        if turn is None:
            return
        rid = _rid(self._requests()[turn], turn)
        if len(self._calls) == 1 or rid in self.state.responses:
            self._rebuild = True  # the turns' own figures recorded so far give way to the calls
        else:
            self._dirty(turn)

    def _turn_at(self, millis: int) -> int | None:
        """The turn a call starting at ``millis`` belongs to (None: no turn yet)."""
        turn = None
        for index, request in enumerate(self._requests()):
            stamp = request.get("timestamp") if isinstance(request, dict) else None
            if turn is None or (isinstance(stamp, int | float) and stamp <= millis):
                turn = index
        return turn

    def _calls_of(self, index: int) -> list[ModelCall]:
        """The debug log's calls of turn ``index``: from its timestamp (the first turn's: all
        before it too) to the next turn's."""
        if not self._calls:
            return []
        requests = self._requests()

        def stamp(at: int) -> float:
            value = requests[at].get("timestamp") if isinstance(requests[at], dict) else None
            return value if isinstance(value, int | float) else float("-inf")

        start = bisect_left(self._call_times, stamp(index)) if index else 0
        end = len(self._calls)
        if index + 1 < len(requests):
            end = bisect_left(self._call_times, stamp(index + 1))
        return self._calls[start:end]

    def _requests(self) -> list[Any]:
        doc = self._log.doc
        requests = doc.get("requests") if doc is not None else None
        return requests if type(requests) is list else []

    # -- the session model, from the requests ------------------------------------------------

    def snapshot(self) -> SessionState:
        if self._rebuild:
            self._start_state()
        if self._meta_dirty:
            self._meta()
        if self._dirty_from is not None:
            start, self._dirty_from = self._dirty_from, None
            self._derive_from(start)
        return self.state

    def _start_state(self) -> None:
        old = self.state
        self.state = SessionState(agent=self.agent, path=self.path)
        self.state.skipped = old.skipped
        self.state.lines_read, self.state.bytes_read = old.lines_read, old.bytes_read
        self._spans = []
        self._compactions = set()
        self._rebuild = False
        self._dirty_from = 0
        self._meta_dirty = True
        self._cwd_looked = False

    def _meta(self) -> None:
        self._meta_dirty = False
        doc = self._log.doc or {}
        state = self.state
        if isinstance(doc.get("sessionId"), str):
            state.session_id = doc["sessionId"]
        elif state.session_id is None:
            state.session_id = self.path.stem
        title = doc.get("customTitle")
        state.title = title if isinstance(title, str) and title else state.title
        selected = doc.get("inputState")
        selected = selected.get("selectedModel") if isinstance(selected, dict) else None
        metadata = selected.get("metadata") if isinstance(selected, dict) else None
        if isinstance(metadata, dict):
            budget = token_count(metadata.get("maxInputTokens"))
            if budget:
                state.context_window = budget
        state.touch(_iso(doc.get("creationDate")))
        if not self._cwd_looked:
            self._cwd_looked = True
            state.cwd = workspace_folder(self.path)

    def _derive_from(self, start: int) -> None:
        """Turn requests ``start``… into messages again, the context's tail replaced."""
        context = self.state.context
        start = min(start, len(self._spans))
        drop = sum(self._spans[start:])
        if drop:
            del context[len(context) - drop :]
        del self._spans[start:]
        requests = self._requests()
        for index in range(start, len(requests)):
            request = requests[index]
            line = self._lines[index] if index < len(self._lines) else 0
            if isinstance(request, dict):
                self._request(request, index, line)
            # (a summary in this turn took the earlier turns' messages off: their spans are 0)
            self._spans.append(len(context) - sum(self._spans))

    def _request(self, request: Mapping[str, Any], index: int, line: int) -> None:
        state = self.state
        rid = _rid(request, index)
        timestamp = _iso(request.get("timestamp"))
        state.touch(timestamp)
        message = request.get("message")
        text = _text_of(message.get("text") if isinstance(message, dict) else message)
        state.context.append(Message(f"{rid}:user", "user", [Block("text", text)], line, timestamp))
        result = request.get("result")
        metadata = result.get("metadata") if isinstance(result, dict) else None
        metadata = metadata if isinstance(metadata, dict) else {}
        rounds = metadata.get("toolCallRounds")
        summary = metadata.get("summary")
        if isinstance(rounds, list) and rounds:
            replies, cut = self._rounds(rid, rounds, metadata, line, timestamp)
        else:
            replies, cut = (
                [self._response_parts(rid, request.get("response"), line, timestamp)],
                None,
            )
        if cut is not None and isinstance(summary, dict):
            replies = self._summarised(rid, summary, replies[cut:], line, timestamp)
        state.context.extend(replies)
        self._usage(rid, index, request, metadata, replies, line, timestamp)

    def _rounds(
        self,
        rid: str,
        rounds: list[Any],
        metadata: Mapping[str, Any],
        line: int,
        timestamp: str | None,
    ) -> tuple[list[Message], int | None]:
        """The turn's model calls: each an assistant message and its tool results; and where
        Copilot's summary of the history ends among them (None: no summary in this turn)."""
        state = self.state
        results = metadata.get("toolCallResults")
        results = results if isinstance(results, dict) else {}
        summary = metadata.get("summary")
        summarised = summary.get("toolCallRoundId") if isinstance(summary, dict) else None
        messages: list[Message] = []
        cut: int | None = None
        for number, round_ in enumerate(rounds):
            if not isinstance(round_, dict):
                continue
            round_id = str(round_.get("id") or f"{rid}:round-{number}")
            blocks: list[Block] = []
            if thought := _thinking(round_):
                blocks.append(Block("thinking", thought))
            if isinstance(round_.get("response"), str) and round_["response"]:
                blocks.append(Block("text", round_["response"]))
            calls = round_.get("toolCalls")
            answers: list[Block] = []
            for call in calls if isinstance(calls, list) else []:
                if not isinstance(call, dict) or not isinstance(call.get("id"), str):
                    continue
                name = str(call.get("name") or "unknown")
                arguments = call.get("arguments")
                state.record_tool_call(call["id"], name, raw_input=arguments)
                blocks.append(Block("tool_use", "", call["id"], name, raw=arguments))
                if call["id"] in results:
                    output = _text_of(results[call["id"]])
                    state.record_tool_result(call["id"], output)
                    answers.append(Block("tool_result", output, call["id"]))
            messages.append(Message(round_id, "assistant", blocks, line, timestamp))
            if answers:
                messages.append(Message(f"{round_id}:results", "tool", answers, line, timestamp))
            if summarised is not None and round_id == summarised:
                cut = len(messages)
        return messages, cut

    def _summarised(
        self,
        rid: str,
        summary: Mapping[str, Any],
        after: list[Message],
        line: int,
        timestamp: str | None,
    ) -> list[Message]:
        """Copilot summarised the conversation up to a round of this turn: from here on the
        context is its summary, the turn's user message and the rounds after the summary."""
        state = self.state
        key = f"{rid}:{summary.get('toolCallRoundId')}"
        user = state.context[-1]  # (this turn's, just added)
        if key not in self._compactions:
            self._compactions.add(key)
            state.keep_context()
            state.record_compaction(Compaction("auto", line=line, timestamp=timestamp))
        state.context.clear()
        for index in range(len(self._spans)):
            self._spans[index] = 0  # (the earlier turns are off the context)
        text = _text_of(summary.get("text"))
        message = Message(f"{key}:summary", "user", [Block("text", text)], line, timestamp)
        message.kind = "compact_summary"
        return [message, user, *after]

    def _response_parts(self, rid: str, parts: Any, line: int, timestamp: str | None) -> Message:
        """A turn without its rounds: the response as the chat shows it."""
        blocks: list[Block] = []
        text: list[str] = []
        for part in parts if isinstance(parts, list) else []:
            if not isinstance(part, dict):
                continue
            kind = part.get("kind")
            if kind in (None, "markdownContent") and isinstance(part.get("value"), str):
                text.append(part["value"])
            elif kind == "thinking":
                if thought := _text_of(part.get("value")):
                    blocks.append(Block("thinking", thought))
            elif kind == "toolInvocationSerialized" and isinstance(part.get("toolCallId"), str):
                name = str(part.get("toolId") or "unknown")
                self.state.record_tool_call(part["toolCallId"], name)
                blocks.append(Block("tool_use", "", part["toolCallId"], name))
        if text:
            blocks.append(Block("text", "".join(text)))
        return Message(f"{rid}:response", "assistant", blocks, line, timestamp)

    def _usage(
        self,
        rid: str,
        index: int,
        request: Mapping[str, Any],
        metadata: Mapping[str, Any],
        replies: list[Message],
        line: int,
        timestamp: str | None,
    ) -> None:
        model = metadata.get("resolvedModel") or request.get("modelId")
        model = model.removeprefix(_MODEL_PREFIX) if isinstance(model, str) and model else None
        line = self._usage_lines.get(index, line)
        calls = self._calls_of(index)
        if calls:
            self._record_calls(calls, model, replies, line)
            rid = calls[-1].key  # (the turn's last prompt is its last call's)
        else:
            self._record_turn(rid, request, metadata, model, replies, line, timestamp)
        shares = _shares(request.get("promptTokenDetails"))
        if shares and rid in self.state.responses:
            self.state.agent_shares = AgentShares(rid, shares)

    def _record_calls(
        self, calls: list[ModelCall], model: str | None, replies: list[Message], line: int
    ) -> None:
        """Each model call of a turn a request; the turn's answers those of its calls in order
        (the last answer the last call's when the log has fewer rounds than calls)."""
        answers = [message for message in replies if message.role == "assistant"]
        for number, call in enumerate(calls):
            if answers:
                answers[min(number, len(answers) - 1)].response_key = call.key
            self.state.record_response(
                call.key,
                call.usage,
                model=model or call.model,
                line=line,
                timestamp=_iso(call.millis),
            )

    def _record_turn(
        self,
        rid: str,
        request: Mapping[str, Any],
        metadata: Mapping[str, Any],
        model: str | None,
        replies: list[Message],
        line: int,
        timestamp: str | None,
    ) -> None:
        """The turn one request: its last prompt and its output."""
        prompt = request.get("promptTokens", metadata.get("promptTokens"))
        output = request.get("completionTokens", metadata.get("outputTokens"))
        if prompt is None and output is None:
            return
        prompt_tokens, output_tokens = token_count(prompt or 0), token_count(output or 0)
        if prompt_tokens is None or output_tokens is None:
            self.state.skip(line, f"request {rid} with malformed token counts")
            return
        usage = Usage(input_tokens=prompt_tokens, output_tokens=output_tokens)
        answer = next((m for m in reversed(replies) if m.role == "assistant"), None)
        if answer is not None:
            answer.response_key = rid
        self.state.record_response(rid, usage, model=model, line=line, timestamp=timestamp)

    # -- agent facts ---------------------------------------------------------------------------

    def autocompact_at(self, context_window: int) -> int | None:
        """Copilot Chat summarises in the background when the prompt reaches this
        conversation's warm-cache fraction of the budget (0.78–0.82; 0.90 with a cold cache:
        ``policies`` says which applies now)."""
        # (imported here: the policies module reads sessions through the agents' registry)
        from ctxtop.engine.agents.strategies import copilot_jitter

        key = self.state.session_id or str(self.state.path)
        return int(context_window * copilot_jitter(key))

    @classmethod
    def discover(cls, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        return session_files(env, home)


def _rid(request: Any, index: int) -> str:
    rid = request.get("requestId") if isinstance(request, dict) else None
    return rid if isinstance(rid, str) and rid else f"request-{index}"


def _shares(details: Any) -> tuple[PromptShare, ...]:
    """VS Code's ``promptTokenDetails`` (malformed entries left out)."""
    found = []
    for item in details if isinstance(details, list) else []:
        if not isinstance(item, dict):
            continue
        percent = item.get("percentageOfPrompt")
        if isinstance(percent, bool) or not isinstance(percent, int | float):
            continue
        if not 0 <= percent <= 100:
            continue
        found.append(
            PromptShare(str(item.get("category") or ""), str(item.get("label") or ""), percent)
        )
    return tuple(found)


def workspace_folder(path: Path) -> str | None:
    """The folder of the workspace a session belongs to (``workspace.json`` beside its
    ``chatSessions`` folder; None for an empty window's session or an unreadable file)."""
    try:
        raw = json.loads((path.parent.parent / "workspace.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    uri = raw.get("folder") or raw.get("workspace") if isinstance(raw, dict) else None
    if not isinstance(uri, str):
        return None
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return uri
    folder = unquote(parsed.path)
    if len(folder) > 2 and folder[0] == "/" and folder[2] == ":":  # file:///c:/… on Windows
        folder = folder[1:]
    return folder


__all__ = ["VSCodeCopilotAdapter", "workspace_folder"]

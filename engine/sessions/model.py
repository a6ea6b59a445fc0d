"""The session model every adapter fills: responses, messages, tools, compactions, sub-agents.

All classes are plain mutable dataclasses. An adapter owns one ``SessionState`` and updates it in
place as records arrive; the helpers here (``record_response``, ``record_tool_call``, …) keep the
running totals right so that reading a snapshot never has to walk the whole session.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from array import array
from collections import deque
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ctxtop.engine.sessions import responses as _responses
from ctxtop.engine.sessions.prompt_parts import AgentCounts, AgentShares, PromptParts
from ctxtop.engine.sessions.request_history import RequestHistory
from ctxtop.engine.sessions.responses import Response, Responses, Usage
from ctxtop.engine.sessions.tool_calls import RESULTS_WITHOUT_CALL, ChangeLog, ToolCall, ToolCalls

if TYPE_CHECKING:
    from ctxtop.engine.sessions.tokenizer_factor import TokenizerFactor

# (defined beside the session's other calls and responses, read from here too)
__all__ = ["Response", "Responses", "ToolCall", "Usage"]

# A session keeps the texts of at least its newest tool results of this many characters (the
# ledger counts these with the tokenizer, and estimates older ones from their length): a long
# session's memory does not grow with the text of results that left the context long ago.
RESULT_BUDGET = 1_000_000

# The unknown record types a session names one by one (the rest are summed under OTHER_TYPES),
# and the length of a name kept.
MAX_TYPES = 50
MAX_TYPE_NAME = 80
NO_TYPE = "(no type)"
OTHER_TYPES = "(other types)"

Role = Literal["system", "developer", "user", "assistant", "tool"]
BlockKind = Literal["text", "thinking", "tool_use", "tool_result", "image", "other"]


@dataclass(slots=True)
class Block:
    """One piece of a message. ``text`` is what the model sees (tool input as JSON text).

    An adapter may leave ``text`` empty and keep the JSON value in ``raw`` instead, to serialise
    it only when someone asks (``content()``): most blocks are never looked at.
    """

    kind: BlockKind
    text: str = ""
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False
    raw: Any = None

    def content(self) -> str:
        """The block's text, serialising ``raw`` as JSON when there is no text."""
        if self.text or self.raw is None:
            return self.text
        return json.dumps(self.raw, ensure_ascii=False)

    def __deepcopy__(self, memo: dict[int, Any]) -> Block:
        # A copy of a session (a fork's preview of the dashboard's): ``raw`` is a decoded JSON
        # value no one changes, shared (the generic copy took 3 times as long).
        return dataclasses.replace(self)


@dataclass(slots=True)
class Message:
    """One message in the model's context (or in the log), in the order the model sees it."""

    id: str  # a unique id within the session (uuid, or "L<line>" when the log has none)
    role: Role
    blocks: list[Block] = field(default_factory=list)
    line: int = 0
    timestamp: str | None = None
    response_key: str | None = None  # set on assistant messages produced by a Response
    kind: str = "message"  # e.g. "message", "attachment", "compact_summary", "meta", "instructions"

    def __deepcopy__(self, memo: dict[int, Any]) -> Message:
        return dataclasses.replace(self, blocks=[copy.deepcopy(b, memo) for b in self.blocks])


# Where a compaction's "after" figure comes from: the agent logged it, it is the prompt of the
# first request after the compaction, or it is the agent's own estimate of the new history.
# "ctxtop": the estimate ctxtop promised for a compaction it wrote into its fork.
PostSource = Literal["logged", "request", "estimate", "ctxtop"]


@dataclass(slots=True)
class Compaction:
    trigger: str  # "manual" | "auto" | "unknown" | "ctxtop" (one ctxtop wrote)
    pre_tokens: int | None = None
    post_tokens: int | None = None
    line: int = 0
    timestamp: str | None = None
    post_source: PostSource = "logged"
    # The whole context right after, as every view shows it (a sample's copy only, set by
    # engine/live/whole.py): ``post_tokens`` plus, when the agent counted only the messages,
    # the system prompt and tools as the request before the compaction had them.
    after_tokens: int | None = None

    def after_source(self) -> str:
        """The provenance of the "after" every view shows: estimated (the agent's own estimate,
        or ctxtop's for one it wrote), inferred (the agent's figure of the messages plus the
        system prompt and tools), else reported."""
        after = self.after_tokens if self.after_tokens is not None else self.post_tokens
        if self.post_tokens is not None and self.post_source in ("estimate", "ctxtop"):
            return "estimated"
        return "inferred" if after != self.post_tokens else "reported"

    def settle(self, prompt: int) -> None:
        """Its "after" from the first request that follows it: that request's whole prompt,
        as the API reported it (for agents that log no figure of their own)."""
        self.post_tokens = prompt
        self.post_source = "request"


@dataclass(slots=True)
class Microcompaction:
    """The agent cleared old tool results (and attachments) in place, nothing summarised
    (Claude Code's ``microcompact_boundary``): from here on the model sees a marker instead."""

    trigger: str
    pre_tokens: int | None = None  # the context before, as the agent counted it
    tokens_saved: int | None = None  # the agent's own count
    cleared_results: int = 0  # tool results it named
    cleared_attachments: int = 0
    line: int = 0
    timestamp: str | None = None


@dataclass(slots=True)
class Truncation:
    """The agent dropped the oldest messages of a prompt over its limit (Copilot CLI's
    ``session.truncation``): nothing was summarised, so it is not a compaction."""

    pre_tokens: int | None = None
    post_tokens: int | None = None
    messages_removed: int | None = None
    token_limit: int | None = None
    line: int = 0
    timestamp: str | None = None


@dataclass(frozen=True, slots=True)
class ForkEstimate:
    """ctxtop's estimate of a fork's whole context, from the mark it wrote on the fork's last
    line (engine/sessions/fork_mark.py): the context until the agent makes a request on it."""

    tokens: int
    line: int


@dataclass(slots=True)
class SkippedLine:
    path: str
    line: int
    reason: str


@dataclass
class SessionState:
    """Everything known about one session (or one sub-agent's window), updated in place.

    ``context`` is the list of messages the model will see on the next request, in order: the
    adapter keeps it as the active chain (Claude Code), replaces it on a compaction or a history
    rewrite (Codex ``replacement_history``, Gemini ``$set``), and appends otherwise.
    ``last_response`` is the newest response *on that context*; ``pending_compaction`` is set when
    a compaction happened after it (cleared by the next response).
    """

    agent: str
    path: Path
    agent_version: str | None = None
    session_id: str | None = None
    model: str | None = None
    cwd: str | None = None
    title: str | None = None
    context_window: int | None = None  # only when the agent itself logged one
    # The system prompt and tools of the latest main request, when the log records their text.
    prompt_parts: PromptParts | None = None
    # The sizes the agent itself logged for its prompt and context (Copilot CLI), if any.
    agent_counts: AgentCounts | None = None
    # The agent's own split of its latest prompt by part (VS Code Copilot Chat), if logged.
    agent_shares: AgentShares | None = None
    first_activity: str | None = None
    last_activity: str | None = None
    # Each response's ``usage.total`` and line, in the order of ``responses``, kept as responses
    # arrive so that figures over the whole history cost O(new responses) per update, and the
    # index of every response added or revised (only ever appended: a reader keeps its place).
    request_sizes: array[int] = field(default_factory=lambda: array("q"))
    request_lines: array[int] = field(default_factory=lambda: array("q"))
    request_changes: array[int] = field(default_factory=lambda: array("q"))
    # By key, numbered by ``Response.index``; the history's in columns (``Responses``).
    responses: Responses = field(init=False)
    request_lines_ordered: bool = True  # each response's line >= the one before it
    # How many of ``request_sizes`` a ``RequestHistory`` handed out can see (``_note_request``
    # copies the array before it changes one of them).
    _sizes_shared: int = field(default=0, repr=False, compare=False)
    totals: Usage = field(default_factory=Usage)
    unitemised_requests: int = 0  # requests counted without a ``Response`` (record_unitemised)
    last_response: Response | None = None
    context: list[Message] = field(default_factory=list)
    # The calls by id: the newest as ``ToolCall``s, those whose result text was let go of
    # (``_retain``) in the archive's columns (engine/sessions/tool_calls.py).
    tools: ToolCalls = field(default_factory=ToolCalls)
    # Calls in the order they were added, given a (new) result or archived; only ever
    # appended, so a reader (engine/sessions/ledger.py) keeps its own place and tallies only
    # what is new.
    tool_changes: ChangeLog = field(default_factory=ChangeLog)
    # The results whose texts are kept (newest last): the call, the text's length and its
    # ``result_serial``; their length in all; the results given so far (``_retain``).
    _retained: deque[tuple[ToolCall, int, int]] = field(
        default_factory=deque, repr=False, compare=False
    )
    _retained_chars: int = field(default=0, repr=False, compare=False)
    _results_given: int = field(default=0, repr=False, compare=False)
    compactions: list[Compaction] = field(default_factory=list)
    pending_compaction: Compaction | None = None
    # Set when the file is a fork ctxtop wrote; cleared by the next response or compaction.
    fork_estimate: ForkEstimate | None = None
    # The context as a reader found it just before it last rewrote it (a compaction, a
    # truncation) with a request on it, and the rewrite line before that: until a request
    # follows the rewrite, the system prompt's size is inferred from that context's first
    # request (engine/analysis/analyze.py), the same whether the file was read in one go or
    # followed line by line.
    context_before_rewrite: tuple[list[Message], int] | None = None
    truncations: list[Truncation] = field(default_factory=list)
    microcompactions: list[Microcompaction] = field(default_factory=list)
    # Lines where a new agent process took the next prompt (Claude Code ``-p --resume``).
    process_starts: list[int] = field(default_factory=list)
    subagents: dict[str, SessionState] = field(default_factory=dict)
    skipped: list[SkippedLine] = field(default_factory=list)
    # Records a reader left out, by type: ``ignored_types`` it knows carry nothing ctxtop shows;
    # ``unknown_types`` it does not know (a format change may hide figures in them).
    ignored_types: dict[str, int] = field(default_factory=dict)
    unknown_types: dict[str, int] = field(default_factory=dict)
    # For a sub-agent: its id, type/description, and the parent's tool call that started it;
    # for a sub-agent's file opened on its own, also the parent session's id and file (when
    # that file was found beside it).
    subagent_id: str | None = None
    description: str | None = None
    parent_tool_call_id: str | None = None
    parent_session_id: str | None = None
    parent_path: Path | None = None
    # A sub-agent's file opened on its own: its parent's tokenizer factor as the parent had it
    # when the sub-agent started (engine/agents/parent_factor.py), its starting guess.
    parent_factor: TokenizerFactor | None = None
    # A sub-agent whose requests send the parent's conversation before its own messages (Claude
    # Code's compaction agent): it finds what the parent left in the prompt cache.
    continues_parent: bool = False
    lines_read: int = 0
    bytes_read: int = 0

    def __post_init__(self) -> None:
        self.responses = Responses(self.request_lines)

    @property
    def api_requests(self) -> int:
        return len(self.responses) + self.unitemised_requests

    def record_unitemised(self, usage: Usage, requests: int = 0) -> None:
        """Usage the log gives without a whole request's figures (Copilot CLI 1.0.3x: each
        answer's output tokens, the prompt tokens only as a sum when the process ends): in the
        totals and the count of requests, never a context figure."""
        self.totals.add(usage)
        self.unitemised_requests += requests

    @property
    def last_rewrite_line(self) -> int:
        """The line of the last compaction, truncation or microcompaction (0: none): requests
        before it were sent with a history the context no longer holds (a microcompaction's
        cleared results were whole in them)."""
        compacted = self.compactions[-1].line if self.compactions else 0
        cleared = self.microcompactions[-1].line if self.microcompactions else 0
        return max(compacted, cleared, self.truncations[-1].line if self.truncations else 0)

    def touch(self, timestamp: str | None) -> None:
        if timestamp:
            if self.first_activity is None:
                self.first_activity = timestamp
            if self.last_activity is None or timestamp > self.last_activity:
                self.last_activity = timestamp

    def record_response(
        self,
        key: str,
        usage: Usage,
        *,
        model: str | None = None,
        line: int = 0,
        timestamp: str | None = None,
        on_context: bool = True,
    ) -> Response:
        """Add a response, or replace the usage of one already seen under ``key``.

        The running ``totals`` stay exact: a repeated key first subtracts its old usage.
        ``on_context`` says the response belongs to the active context (it becomes
        ``last_response`` and clears ``pending_compaction``).
        """
        responses = self.responses
        existing = responses.get(key)
        if existing is None:
            existing = Response(key=key, usage=usage, model=model, line=line, timestamp=timestamp)
            responses.add(existing)
        else:
            if existing.index < responses.archived:  # (a snapshot: its figures are columns)
                responses.revise(existing.index, usage, model)
            self.totals.add(existing.usage, -1)
            existing.usage = usage
            if model:
                existing.model = model
        self._note_request(existing)
        self.totals.add(usage)
        if model:
            self.model = model
        self.touch(timestamp)
        if on_context:
            last = self.last_response
            if last is None or last.key != key:
                self.pending_compaction = None
                self.fork_estimate = None
            self.last_response = existing
        return existing

    def _note_request(self, response: Response) -> None:
        index = response.index
        if index < 0:
            index = response.index = len(self.request_sizes)
            if self.request_lines and response.line < self.request_lines[-1]:
                self.request_lines_ordered = False
            self.request_sizes.append(response.usage.total)
            self.request_lines.append(response.line)
        elif self.request_sizes[index] != response.usage.total:
            if index < self._sizes_shared:  # (a view handed out keeps the sizes it had)
                self.request_sizes = array("q", self.request_sizes)
                self._sizes_shared = 0
            self.request_sizes[index] = response.usage.total
        self.request_changes.append(index)

    def request_history(self) -> RequestHistory:
        """The context size after every request (``usage.total``), oldest first: a view that
        keeps what it shows, made without copying."""
        self._sizes_shared = len(self.request_sizes)
        return RequestHistory(self.request_sizes, self._sizes_shared)

    def requests_since(self, line: int, limit: int) -> list[int]:
        """The sizes of the last ``limit`` requests logged after ``line``, oldest first: a
        walk back from the newest while the lines are in order (every request otherwise)."""
        if not self.request_lines_ordered:
            pairs = zip(self.request_sizes, self.request_lines, strict=True)
            after = [size for size, at in pairs if at > line]
            return after[-limit:] if limit else []
        found: list[int] = []
        index = len(self.request_sizes) - 1
        while index >= 0 and len(found) < limit and self.request_lines[index] > line:
            found.append(self.request_sizes[index])
            index -= 1
        return found[::-1]

    def record_tool_call(
        self, call_id: str, name: str, *, line: int = 0, input_text: str = "", raw_input: Any = None
    ) -> ToolCall:
        """Register a tool call once by its id (later copies of the same call are ignored; a
        call logged after its result names the result's row)."""
        tools = self.tools
        call = tools.live.get(call_id)
        if call is not None and call.name == RESULTS_WITHOUT_CALL:
            call.name, call.line, call.input_text = name, line, input_text
            call.raw_input = raw_input
            self.tool_changes.append(call)
        if call is None:
            row = tools.archived.find(call_id)
            if row >= 0:
                return tools.archived.call(row)
            call = tools.live[call_id] = ToolCall(
                call_id, name, line, input_text, raw_input=raw_input
            )
            self.tool_changes.append(call)
        return call

    def record_tool_result(self, call_id: str, text: str, *, is_error: bool = False) -> None:
        """Attach a result to its call (a result without a known call is counted under the
        ``RESULTS_WITHOUT_CALL`` row)."""
        call = self.tools.live.get(call_id)
        if call is None:
            archived = self.tools.archived
            row = archived.find(call_id)
            if row >= 0:  # (its text was let go of: this one is new, as it was to the call)
                call = self.tools.live[call_id] = archived.take(row)
            else:
                call = self.record_tool_call(call_id, RESULTS_WITHOUT_CALL)
        if call.result_text != text:
            if call.result_text is not None:  # a replaced text leaves the newest results
                self._retained_chars -= call.result_chars
            call.result_text = text
            call.result_chars = len(text)
            self._results_given += 1
            call.result_serial = self._results_given
            self.tool_changes.append(call)
            self._retain(call)
        call.is_error = is_error

    def _retain(self, call: ToolCall) -> None:
        """Keep ``call``'s result text among the newest; archive the calls of results older
        than the newest ``RESULT_BUDGET`` characters (they keep their length)."""
        retained = self._retained
        retained.append((call, call.result_chars, call.result_serial))
        self._retained_chars += call.result_chars
        while retained:
            oldest, chars, serial = retained[0]
            if oldest.result_serial != serial:  # replaced since: its characters left then
                retained.popleft()
                continue
            if self._retained_chars - chars < RESULT_BUDGET:
                return
            retained.popleft()
            self._retained_chars -= chars
            self._archive_call(oldest)
            # Calls older than it that never had a result are settled too.
            self.tool_changes.drop_settled(partial(self._settle_unanswered, before=oldest.line))

    def _archive_call(self, call: ToolCall) -> None:
        call.result_text = None
        call.raw_input = None
        del self.tools.live[call.call_id]
        call.archived = True
        self.tools.archived.add(call)
        self.tool_changes.append(call)  # (so that a reader that counted it takes it back)

    def _settle_unanswered(self, call: ToolCall, *, before: int) -> bool:
        if call.result_text is not None or call.result_chars or call.line >= before:
            return False
        self._archive_call(call)
        return True

    def keep_context(self) -> None:
        """Keep the context before a rewrite, when a request since the last one is on it (after
        two rewrites with no request between them, the one kept before stays)."""
        since = self.last_rewrite_line
        for message in self.context:
            key = message.response_key
            response = self.responses.get(key) if key is not None else None
            if response is not None and response.line >= since:
                self.context_before_rewrite = (list(self.context), since)
                return

    def record_compaction(self, compaction: Compaction) -> None:
        self._archive()
        self.compactions.append(compaction)
        self.pending_compaction = compaction
        self.fork_estimate = None
        self.touch(compaction.timestamp)

    def record_microcompaction(self, microcompaction: Microcompaction) -> None:
        """The messages stay, the contents it names are cleared (the adapter replaces them in
        ``context``); the requests before it sent them whole (``last_rewrite_line``)."""
        self.microcompactions.append(microcompaction)
        self.touch(microcompaction.timestamp)

    def record_truncation(self, truncation: Truncation) -> None:
        self._archive()
        self.truncations.append(truncation)
        self.touch(truncation.timestamp)

    def _archive(self) -> None:
        """Before a rewrite is recorded: move the responses logged before the previous one
        (lines < ``last_rewrite_line``) to the columns, up to ``last_response`` (the window just
        before the newest rewrite may still be referred to: ``context_before_rewrite``, a
        compaction's preserved messages). The same rule cold and live, for every agent."""
        bound = self.last_rewrite_line
        if not bound or not _responses.ARCHIVE:
            return
        last = self.last_response
        self.responses.archive(bound, None if last is None else last.key)

    def skip(self, line: int, reason: str, path: str | None = None) -> None:
        self.skipped.append(SkippedLine(path=path or str(self.path), line=line, reason=reason))

    def ignore_type(self, kind: str) -> None:
        """A record of a type the reader knows and leaves out (it carries nothing shown)."""
        self.ignored_types[kind] = self.ignored_types.get(kind, 0) + 1

    def unknown_type(self, kind: Any) -> None:
        """A record of a type the reader does not know, left out (shown as such). A log may
        hold any value there, and any number of them: a few names are kept, the rest summed."""
        name = kind[:MAX_TYPE_NAME] if isinstance(kind, str) else NO_TYPE
        types = self.unknown_types
        if name not in types and len(types) >= MAX_TYPES:
            name = OTHER_TYPES
        types[name] = types.get(name, 0) + 1

    def subagent(self, subagent_id: str, path: Path | None = None) -> SessionState:
        """The sub-agent's own state (created on first use); it is never added to the parent's."""
        child = self.subagents.get(subagent_id)
        if child is None:
            child = SessionState(agent=self.agent, path=path or self.path, subagent_id=subagent_id)
            child.agent_version = self.agent_version
            child.session_id = self.session_id
            self.subagents[subagent_id] = child
        return child

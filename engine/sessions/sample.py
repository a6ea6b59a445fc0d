"""``Sample``: the figures of a session at one moment, typed, built once per update.

One sample feeds everything that shows figures: the dashboard (engine/live), ``ctxtop report
--json`` (engine/sessions/report_json.py, the one serializer), ``ctxtop sessions`` and ``ctxtop
statusline``. A sample copies what it shows out of the session model, so it stays as it was
when the model moves on (the dashboard keeps and replays samples). Its window and auto-compact
point are decided in engine/sessions/limits.py; here, the one fill % (``fill_percent``) and the
context figure (``context_tokens``), counted with the session's ``Ledger``. Context tokens, by
provenance:

- ``compaction``: a compaction happened after the last request and logged its ``postTokens``;
- ``reported``: the last request's whole prompt plus its output (what the agent itself counts,
  e.g. Claude Code's ``tokenCountWithEstimation``), nothing sent since;
- ``calibrated``: that reported figure plus a tokenizer estimate of what came after the last
  request (tool results, attachments, a new prompt not yet sent), less what a microcompaction
  after it cleared (the agent's own count);
- ``logged``: no request logged its prompt, but the agent logged its own count of the whole
  context (Copilot CLI 1.0.3x's ``currentTokens``): that count plus a tokenizer estimate of what
  came after it. The agent's count, not the API's: never ``reported``;
- ``estimated``: nothing reported applies (no request with usage in the log, or a compaction
  without ``postTokens`` and no request since): every message of the context counted with the
  tokenizer. The system prompt and tool definitions are not in the logs, so this is low. In a
  fork ctxtop wrote, before the agent's first request on it: the estimate ctxtop marked in it
  (the figure its preview promised, system prompt and tools included) plus what came after.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from ctxtop.engine.models.window import Window
from ctxtop.engine.safety.terminal import one_line
from ctxtop.engine.sessions.adapter import Adapter
from ctxtop.engine.sessions.cache_clock import CachedPrefix, cached_prefix
from ctxtop.engine.sessions.ledger import CategoryTotal, Ledger, ToolTotal, encoding_for
from ctxtop.engine.sessions.limits import autocompact_point, session_window
from ctxtop.engine.sessions.model import (
    Compaction,
    Microcompaction,
    SessionState,
    SkippedLine,
    Truncation,
    Usage,
)
from ctxtop.engine.sessions.prompt_parts import AgentPart, PromptShare, agent_parts, logged_prompt
from ctxtop.engine.sessions.tokenizer_factor import (
    TokenizerFactor,
    last_answer_index,
    learn,
    tool_calls,
)
from ctxtop.engine.tokens.encoding import Encoding

# An output figure below this share of the answer's tokenizer count is a placeholder.
PLACEHOLDER_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class ContextTokens:
    value: int
    source: str  # reported | calibrated | logged | estimated | compaction
    reported: int | None  # the part the log reported (None for estimated/compaction)
    estimated: int  # the part estimated: tokenizer counts times ``factor``
    factor: float = 1.0  # API tokens per tokenizer token learnt from the session (1: none)


def context_tokens(
    state: SessionState,
    ledger: Ledger | None = None,
    encoding: Encoding | None = None,
    factor: TokenizerFactor | None = None,
) -> ContextTokens:
    """The context figure (see the module's doc); counts with ``ledger`` (None: a new one,
    nothing kept). ``factor``: the tokenizer factor to correct counts with (None: the one the
    session's requests teach, engine/sessions/tokenizer_factor.py)."""
    encoding = encoding or encoding_for(state)
    ledger = ledger or Ledger()
    # A fork mark is never older than the pending compaction (a compaction clears it): on
    # the compaction ctxtop wrote into its fork, it is the same figure, marked estimated.
    fork = state.fork_estimate
    if fork is not None:
        after = [message for message in state.context if message.line > fork.line]
        value = fork.tokens + ledger.messages(after, encoding)
        return ContextTokens(value, "estimated", None, value)
    compaction = state.pending_compaction
    if compaction is not None and compaction.post_tokens is not None:
        return ContextTokens(compaction.post_tokens, "compaction", None, 0)
    last = state.last_response
    context = state.context
    start = None if last is None else last_answer_index(context, last.key)
    if last is None or start is None:
        counted = state.agent_counts
        if last is None and counted is not None and counted.context is not None:
            # No request logged its prompt, the agent logged its own count of the context:
            # that count plus what was logged after it.
            since = [message for message in context if message.line > counted.line]
            tokens = ledger.messages(since, encoding)
            return ContextTokens(counted.context + tokens, "logged", None, tokens)
        estimate = ledger.messages(context, encoding)
        return ContextTokens(estimate, "estimated", None, estimate)
    if factor is None:
        factor = learn(state, ledger, encoding, fit_calls=False)
    # After the last request's answer: what was added since (tool results, a new prompt),
    # including results logged between the records of that one answer (parallel tool calls).
    after = context[start:]
    added = [message for message in after if message.response_key != last.key]
    estimate = factor.grown(ledger.messages(added, encoding), tool_calls(added))
    # The answer is on the context as its text. An output figure far below that text's count
    # is no count of it: Claude Code often logs a placeholder of 1-10 output tokens.
    answer = [message for message in after if message.response_key == last.key]
    output = last.usage.output_tokens
    answer_tokens = ledger.messages(answer, encoding)
    if output < answer_tokens * PLACEHOLDER_SHARE:
        estimate += max(factor.grown(answer_tokens, 0) - output, 0)
    reported = last.usage.input_tokens_total + output
    # Results a microcompaction cleared since that request: the next one sends the markers.
    cleared = _cleared_since(state, last.line)
    source = "calibrated" if estimate or cleared else "reported"
    value = max(reported - cleared, 0) + estimate
    return ContextTokens(value, source, reported, estimate, factor.value)


def _cleared_since(state: SessionState, line: int) -> int:
    """What the microcompactions after ``line`` saved, as the agent counted it: the last
    request sent those results whole, the next one sends the markers."""
    saved = 0
    for item in reversed(state.microcompactions):
        if item.line <= line:
            break
        saved += item.tokens_saved or 0
    return saved


def fill_percent(tokens: int, window: int | None) -> float | None:
    """The fill every figure shows (report, dashboard, listing, status line): % to 0.1."""
    return round(100 * tokens / window, 1) if window else None


@dataclass(frozen=True, slots=True)
class LastRequest:
    usage: Usage
    response_id: str
    line: int
    timestamp: str | None
    # The agent's own split of this prompt by part, when it logged one (VS Code Copilot Chat).
    agent_shares: tuple[PromptShare, ...] = ()

    @property
    def agent_split(self) -> tuple[AgentPart, ...]:
        """The agent's own split of this prompt, each part in tokens of the reported prompt
        (empty: the agent logged none)."""
        return agent_parts(self.agent_shares, self.usage.input_tokens_total)


@dataclass(frozen=True, slots=True)
class Breakdown:
    """What the context holds by kind of content (tokenizer counts times ``factor``, the
    session's tokenizer factor); ``outside_log``: the part of the context figure the log's
    messages do not show (system prompt, tools, framing; "unattributed" in the report's JSON),
    of which ``logged_prompt`` is the system prompt and tools counted from the log when it
    records their text (0: it does not)."""

    categories: tuple[CategoryTotal, ...]
    outside_log: int
    encoding: str
    logged_prompt: int = 0
    factor: float = 1.0

    @property
    def estimated_total(self) -> int:
        return sum(entry.tokens for entry in self.categories)


@dataclass(frozen=True, slots=True)
class SubagentSample:
    id: str | None
    description: str | None
    parent_tool_call_id: str | None
    model: str | None
    file: str
    api_requests: int
    last_prompt: int | None  # the whole prompt of its last request
    totals: Usage
    context: ContextTokens
    window: Window  # its model's (the parent's model when its log names none)

    @property
    def fill_percent(self) -> float | None:
        return fill_percent(self.context.value, self.window.tokens)


@dataclass(frozen=True, slots=True)
class Parent:
    """For a sub-agent's own file: what it is and the session (and tool call) that started it."""

    id: str
    description: str | None
    session_id: str | None
    file: str | None
    tool_call_id: str | None


@dataclass(frozen=True, slots=True)
class RecordTypes:
    """Records the reader left out, as (type, count), most first: ``unknown`` of types it does
    not know (figures may be missing there), ``ignored`` of types it knows carry nothing shown."""

    unknown: tuple[tuple[str, int], ...] = ()
    ignored: tuple[tuple[str, int], ...] = ()

    @property
    def unknown_records(self) -> int:
        return sum(count for _, count in self.unknown)

    @property
    def notice(self) -> str | None:
        """One line for the user when records of unknown types were left out, else None."""
        count = self.unknown_records
        if not count:
            return None
        named = self.unknown[:NOTICE_TYPES]
        kinds = ", ".join(f"{one_line(kind)} ({number:,})" for kind, number in named)
        rest = len(self.unknown) - len(named)
        more = f", {rest} more" if rest else ""
        records = "record" if count == 1 else "records"
        return (
            f"{count:,} {records} of types ctxtop does not know: {kinds}{more}"
            " — figures may be incomplete"
        )


# The notice names at most this many unknown types (the report lists all).
NOTICE_TYPES = 4


def _counted(states: Sequence[SessionState], name: str) -> tuple[tuple[str, int], ...]:
    """The counts by type of ``name`` (ignored_types, unknown_types) over ``states``."""
    total: dict[str, int] = {}
    for state in states:
        for kind, count in getattr(state, name).items():
            total[kind] = total.get(kind, 0) + count
    return tuple(sorted(total.items(), key=lambda item: (-item[1], item[0])))


def record_types(state: SessionState) -> RecordTypes:
    """What the session's readers left out by type, its sub-agents' included."""
    states = [state, *state.subagents.values()]
    return RecordTypes(_counted(states, "unknown_types"), _counted(states, "ignored_types"))


@dataclass(frozen=True, slots=True)
class Sample:
    agent: str
    agent_version: str | None
    session_id: str | None
    file: str
    cwd: str | None
    title: str | None
    model: str | None
    first_activity: str | None
    last_activity: str | None
    window: Window
    last_request: LastRequest | None
    context: ContextTokens
    encoding: str
    autocompact_at: int | None
    api_requests: int
    totals: Usage
    compactions: tuple[Compaction, ...]  # "after" only when the window can hold it
    truncations: tuple[Truncation, ...]
    tools: tuple[ToolTotal, ...]
    subagents: tuple[SubagentSample, ...]
    subagent_of: Parent | None
    skipped: tuple[SkippedLine, ...]  # the sub-agents' too
    lines_read: int
    bytes_read: int
    history: Sequence[int]  # context tokens of each request of the main session, oldest first
    breakdown: Breakdown | None = None
    # Results (and attachments) the agent cleared in place, listed with the compactions.
    microcompactions: tuple[Microcompaction, ...] = ()
    record_types: RecordTypes = RecordTypes()
    # What the last request left in the prompt cache, for the cache clock (engine/sessions/
    # cache_clock.py; the clock itself depends on the time it is read).
    cache_prefix: CachedPrefix | None = None

    @property
    def fill_percent(self) -> float | None:
        return fill_percent(self.context.value, self.window.tokens)


def _compaction(compaction: Compaction, window: int | None) -> Compaction:
    """A copy; its "after" figure only when the window can hold it (an agent's own estimate can
    be absurd)."""
    post = compaction.post_tokens
    if post is not None and window and post > window:
        post = None
    return dataclasses.replace(compaction, post_tokens=post)


def _subagent(
    child: SessionState,
    ledger: Ledger,
    parent_model: str | None,
    adapter: Adapter,
    parent_factor: TokenizerFactor,
) -> SubagentSample:
    last = child.last_response
    encoding = encoding_for(child)
    # Until its own requests teach it, a sub-agent's factor is its parent's.
    factor = learn(child, ledger, encoding, parent_factor)
    return SubagentSample(
        id=child.subagent_id,
        description=child.description,
        parent_tool_call_id=child.parent_tool_call_id,
        model=child.model,
        file=str(child.path),
        api_requests=child.api_requests,
        last_prompt=last.usage.input_tokens_total if last else None,
        totals=dataclasses.replace(child.totals),
        context=context_tokens(child, ledger, encoding, factor),
        window=session_window(child, adapter.cli_window, parent_model),
    )


def _parent(state: SessionState) -> Parent | None:
    if state.subagent_id is None:
        return None
    return Parent(
        id=state.subagent_id,
        description=state.description,
        session_id=state.parent_session_id,
        file=None if state.parent_path is None else str(state.parent_path),
        tool_call_id=state.parent_tool_call_id,
    )


def _last_request(state: SessionState) -> LastRequest | None:
    last = state.last_response
    if last is None:
        return None
    split = state.agent_shares
    shares = split.shares if split is not None and split.response_key == last.key else ()
    usage = dataclasses.replace(last.usage)
    return LastRequest(usage, last.key, last.line, last.timestamp, shares)


def build_sample(
    adapter: Adapter, ledger: Ledger | None = None, *, breakdown: bool = False
) -> Sample:
    """The figures of ``adapter``'s session now. ``ledger``: the counts kept between samples
    (None: a new one, nothing kept); ``breakdown``: also what the context holds by kind."""
    state = adapter.snapshot()
    ledger = ledger or Ledger()
    encoding = encoding_for(state)
    window = session_window(state, adapter.cli_window)
    # The calls told from the content only for sub-agents to start from.
    factor = learn(state, ledger, encoding, fit_calls=bool(state.subagents))
    context = context_tokens(state, ledger, encoding, factor)
    skipped = list(ledger.copies(state, "skipped", state.skipped, dataclasses.replace))
    for child in state.subagents.values():
        skipped.extend(dataclasses.replace(item) for item in child.skipped)
    sample = Sample(
        agent=state.agent,
        agent_version=state.agent_version,
        session_id=state.session_id,
        file=str(state.path),
        cwd=state.cwd,
        title=state.title,
        model=state.model,
        first_activity=state.first_activity,
        last_activity=state.last_activity,
        window=window,
        last_request=_last_request(state),
        cache_prefix=cached_prefix(state, adapter.prompt_cache_ttl()),
        context=context,
        encoding=encoding.name,
        autocompact_at=autocompact_point(adapter.autocompact_at, window.tokens),
        api_requests=state.api_requests,
        totals=dataclasses.replace(state.totals),
        compactions=ledger.copies(
            state,
            "compactions",
            state.compactions,
            lambda item: _compaction(item, window.tokens),
            window.tokens,
        ),
        truncations=ledger.copies(state, "truncations", state.truncations, dataclasses.replace),
        microcompactions=ledger.copies(
            state, "microcompactions", state.microcompactions, dataclasses.replace
        ),
        tools=ledger.tools(state, encoding),
        subagents=tuple(
            _subagent(child, ledger, state.model, adapter, factor)
            for child in state.subagents.values()
        ),
        subagent_of=_parent(state),
        skipped=tuple(skipped),
        lines_read=state.lines_read,
        bytes_read=state.bytes_read,
        history=state.request_history(),
        record_types=record_types(state),
    )
    if not breakdown:
        return sample
    counted = ledger.categories(state, encoding)
    categories = tuple(
        dataclasses.replace(entry, tokens=tokens)
        for entry, tokens in zip(counted, factor.spread([e.tokens for e in counted]), strict=True)
    )
    estimated = sum(entry.tokens for entry in categories)
    # (A fork's marked estimate holds the system prompt and tools too.)
    with_outside = context.source != "estimated" or state.fork_estimate is not None
    outside = max(context.value - estimated, 0) if with_outside else 0
    prompt = logged_prompt(state.prompt_parts, state.agent_counts, encoding)
    logged = prompt.tokens if prompt is not None else 0
    kinds = Breakdown(categories, outside, encoding.name, logged_prompt=logged, factor=factor.value)
    return dataclasses.replace(sample, breakdown=kinds)

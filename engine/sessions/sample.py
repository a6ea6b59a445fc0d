"""``Sample``: the figures of a session at one moment, typed, built once per update.

One sample feeds everything that shows figures: the dashboard (engine/live), ``ctxtop report
--json`` (engine/sessions/report.py, the one serializer), ``ctxtop sessions`` and ``ctxtop
statusline``. A sample copies what it shows out of the session model, so it stays as it was
when the model moves on (the dashboard keeps and replays samples). Here too: the one window
choice (``context_window``), the one fill % (``fill_percent``), and the context figure
(``context_tokens``), counted with the session's ``Ledger``. Context tokens, by provenance:

- ``compaction``: a compaction happened after the last request and logged its ``postTokens``;
- ``reported``: the last request's whole prompt plus its output (what the agent itself counts,
  e.g. Claude Code's ``tokenCountWithEstimation``), nothing sent since;
- ``calibrated``: that reported figure plus a tokenizer estimate of what came after the last
  request (tool results, attachments, a new prompt not yet sent);
- ``estimated``: nothing reported applies (no request with usage in the log, or a compaction
  without ``postTokens`` and no request since): every message of the context counted with the
  tokenizer. The system prompt and tool definitions are not in the logs, so this is low.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from engine.models.registry import lookup as model_info
from engine.sessions.adapter import Adapter
from engine.sessions.ledger import CategoryTotal, Ledger, ToolTotal, encoding_for
from engine.sessions.model import (
    Compaction,
    SessionState,
    SkippedLine,
    Truncation,
    Usage,
)
from engine.sessions.tokenizer_factor import (
    TokenizerFactor,
    last_answer_index,
    learn,
)
from engine.tokens.encoding import Encoding

# An output figure below this share of the answer's tokenizer count is a placeholder.
PLACEHOLDER_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class ContextTokens:
    value: int
    source: str  # reported | calibrated | estimated | compaction
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
    compaction = state.pending_compaction
    if compaction is not None and compaction.post_tokens is not None:
        return ContextTokens(compaction.post_tokens, "compaction", None, 0)
    encoding = encoding or encoding_for(state)
    ledger = ledger or Ledger()
    last = state.last_response
    context = state.context
    start = None if last is None else last_answer_index(context, last.key)
    if last is None or start is None:
        estimate = ledger.messages(context, encoding)
        return ContextTokens(estimate, "estimated", None, estimate)
    if factor is None:
        factor = learn(state, ledger, encoding)
    # After the last request's answer: what was added since (tool results, a new prompt),
    # including results logged between the records of that one answer (parallel tool calls).
    after = context[start:]
    added = [message for message in after if message.response_key != last.key]
    estimate = factor.apply(ledger.messages(added, encoding))
    # The answer is on the context as its text. An output figure far below that text's count
    # is no count of it: Claude Code often logs a placeholder of 1-10 output tokens.
    answer = [message for message in after if message.response_key == last.key]
    output = last.usage.output_tokens
    answer_tokens = ledger.messages(answer, encoding)
    if output < answer_tokens * PLACEHOLDER_SHARE:
        estimate += max(factor.apply(answer_tokens) - output, 0)
    reported = last.usage.input_tokens_total + output
    source = "calibrated" if estimate else "reported"
    return ContextTokens(reported + estimate, source, reported, estimate, factor.value)


@dataclass(frozen=True, slots=True)
class Window:
    """The model's context window and where it comes from: ``logged`` by the agent, from the
    model ``registry``, or ``assumed`` (a model the registry does not know)."""

    tokens: int | None
    source: str


def context_window(state: SessionState, fallback_model: str | None = None) -> Window:
    """The one choice of window: the agent's own figure when it logged one, else the model's
    (``fallback_model``: for a sub-agent whose log names none, its parent's)."""
    if state.context_window is not None:
        return Window(state.context_window, "logged")
    info = model_info(state.model or fallback_model)
    return Window(info.context_window, "assumed" if info.assumed else "registry")


def fill_percent(tokens: int, window: int | None) -> float | None:
    """The fill every figure shows (report, dashboard, listing, status line): % to 0.1."""
    return round(100 * tokens / window, 1) if window else None


@dataclass(frozen=True, slots=True)
class LastRequest:
    usage: Usage
    response_id: str
    line: int
    timestamp: str | None


@dataclass(frozen=True, slots=True)
class Breakdown:
    """What the context holds by kind of content (tokenizer counts times ``factor``, the
    session's tokenizer factor); ``unattributed``: the part of the context figure the log does
    not show (system prompt, tools, framing)."""

    categories: tuple[CategoryTotal, ...]
    unattributed: int
    encoding: str
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

    @property
    def fill_percent(self) -> float | None:
        return fill_percent(self.context.value, self.window.tokens)


Item = TypeVar("Item")
# A session's copies of its compactions, truncations and skipped lines, kept between samples
# (until the session is gone): (the session, the terms they were made on, the copies).
_COPIED: dict[tuple[int, str], tuple[weakref.ref[SessionState], object, list[Any]]] = {}


def _copies(
    state: SessionState,
    name: str,
    items: Sequence[Item],
    copy: Callable[[Item], Item],
    terms: object = None,
) -> tuple[Item, ...]:
    """The copies of a session's list ``items`` (only ever appended to), kept between samples:
    a sample copies the newest item again (a reader may still complete it: a compaction's
    "after" figure arrives with the next request) and the items added since, not the whole
    history of them."""
    key = (id(state), name)
    known = _COPIED.get(key)
    if known is None or known[0]() is not state or known[1] != terms or len(known[2]) > len(items):
        # When the session is gone, so are its copies (and another may take its id).
        ref = weakref.ref(state, _forget(key))
        known = _COPIED[key] = (ref, terms, [])
    copies = known[2]
    settled = max(len(copies) - 1, 0)
    del copies[settled:]
    copies.extend(copy(item) for item in items[settled:])
    return tuple(copies)


def _forget(key: tuple[int, str]) -> Callable[[object], None]:
    def forget(_: object) -> None:
        _COPIED.pop(key, None)

    return forget


def _compaction(compaction: Compaction, window: int | None) -> Compaction:
    """A copy; its "after" figure only when the window can hold it (an agent's own estimate can
    be absurd)."""
    post = compaction.post_tokens
    if post is not None and window and post > window:
        post = None
    return dataclasses.replace(compaction, post_tokens=post)


def _subagent(child: SessionState, ledger: Ledger, parent_model: str | None) -> SubagentSample:
    last = child.last_response
    return SubagentSample(
        id=child.subagent_id,
        description=child.description,
        parent_tool_call_id=child.parent_tool_call_id,
        model=child.model,
        file=str(child.path),
        api_requests=child.api_requests,
        last_prompt=last.usage.input_tokens_total if last else None,
        totals=dataclasses.replace(child.totals),
        context=context_tokens(child, ledger),
        window=context_window(child, parent_model),
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
    return LastRequest(dataclasses.replace(last.usage), last.key, last.line, last.timestamp)


def build_sample(
    adapter: Adapter, ledger: Ledger | None = None, *, breakdown: bool = False
) -> Sample:
    """The figures of ``adapter``'s session now. ``ledger``: the counts kept between samples
    (None: a new one, nothing kept); ``breakdown``: also what the context holds by kind."""
    state = adapter.snapshot()
    ledger = ledger or Ledger()
    encoding = encoding_for(state)
    window = context_window(state)
    factor = learn(state, ledger, encoding)
    context = context_tokens(state, ledger, encoding, factor)
    skipped = list(_copies(state, "skipped", state.skipped, dataclasses.replace))
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
        context=context,
        encoding=encoding.name,
        autocompact_at=adapter.autocompact_at(window.tokens) if window.tokens else None,
        api_requests=state.api_requests,
        totals=dataclasses.replace(state.totals),
        compactions=_copies(
            state,
            "compactions",
            state.compactions,
            lambda item: _compaction(item, window.tokens),
            window.tokens,
        ),
        truncations=_copies(state, "truncations", state.truncations, dataclasses.replace),
        tools=ledger.tools(state, encoding),
        subagents=tuple(
            _subagent(child, ledger, state.model) for child in state.subagents.values()
        ),
        subagent_of=_parent(state),
        skipped=tuple(skipped),
        lines_read=state.lines_read,
        bytes_read=state.bytes_read,
        history=state.request_history(),
    )
    if not breakdown:
        return sample
    counted = ledger.categories(state, encoding)
    categories = tuple(
        dataclasses.replace(entry, tokens=tokens)
        for entry, tokens in zip(counted, factor.spread([e.tokens for e in counted]), strict=True)
    )
    estimated = sum(entry.tokens for entry in categories)
    unattributed = max(context.value - estimated, 0) if context.source != "estimated" else 0
    kinds = Breakdown(categories, unattributed, encoding.name, factor.value)
    return dataclasses.replace(sample, breakdown=kinds)

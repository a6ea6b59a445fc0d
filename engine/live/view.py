"""``LiveView``: one sample of a live session, everything the dashboard shows, already computed.

Built from the session's typed ``Sample`` (engine/sessions/sample.py), the one ``ctxtop report``
serializes, so the fill % is the one it gives. Each view is self-contained and immutable, so
views can be kept and replayed.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from engine.agents import profile_of
from engine.analysis.prompt_outline import Outline
from engine.analysis.snapshot import Analysis
from engine.config import Thresholds
from engine.proxy.measured import MeasuredPrompt
from engine.sessions.report import fill_percent
from engine.sessions.sample import Sample
from engine.tokens.short import short_tokens

OK, WARNING, CRITICAL = "ok", "warning", "critical"


@dataclass(frozen=True, slots=True)
class Gauge:
    """The context gauge: fill against the window, with the markers drawn on it."""

    tokens: int
    window: int
    source: str  # provenance of ``tokens``: reported | calibrated | estimated | compaction
    window_source: str  # logged | registry | assumed
    editing_at: int  # ctxtop's editing trigger, in tokens
    compaction_at: int  # ctxtop's compaction trigger, in tokens
    autocompact_at: int | None  # where the agent compacts by itself (None: unknown)

    @property
    def fill(self) -> float:
        return self.tokens / self.window if self.window else 0.0

    @property
    def percent(self) -> float:
        """``fill_percent``, the one every figure shows (``ctxtop report`` too)."""
        return fill_percent(self.tokens, self.window) or 0.0

    @property
    def reserved(self) -> int:
        """The buffer the agent keeps free above its auto-compact point."""
        return self.window - self.autocompact_at if self.autocompact_at is not None else 0

    @property
    def state(self) -> str:
        if self.tokens >= self.compaction_at or (
            self.autocompact_at is not None and self.tokens >= self.autocompact_at
        ):
            return CRITICAL
        return WARNING if self.tokens >= self.editing_at else OK

    @property
    def to_autocompact(self) -> int | None:
        """Tokens left before the agent compacts on its own."""
        if self.autocompact_at is None:
            return None
        return max(self.autocompact_at - self.tokens, 0)


@dataclass(frozen=True, slots=True)
class ToolRow:
    name: str
    calls: int
    tokens: int
    share: float  # of all tool-result tokens


@dataclass(frozen=True, slots=True)
class CategoryRow:
    """A part of the context by kind of content (not an analysis section: no budgets)."""

    name: str
    tokens: int
    source: str  # estimated (the tokenizer) | inferred (the context figure minus the rest)


@dataclass(frozen=True, slots=True)
class SubagentRow:
    name: str  # the description, or the id when there is none
    requests: int
    tokens: int
    source: str


@dataclass(frozen=True, slots=True)
class LastRequest:
    prompt: int
    cache_read: int
    cache_write: int
    output: int


@dataclass(frozen=True, slots=True)
class Event:
    """A line of the event log: a compaction or a truncation seen in the log, a skipped line, or
    an action ctxtop took on the session (``line`` 0: not in the log; ``timestamp`` says when)."""

    kind: str  # compaction | truncation | skipped | action
    line: int
    text: str
    timestamp: str | None = None


@dataclass(frozen=True, slots=True)
class LiveView:
    agent: str
    model: str | None
    session_id: str | None
    title: str | None
    file: str
    last_activity: str | None
    gauge: Gauge
    history: tuple[int, ...]  # context tokens of each request, oldest first
    tools: tuple[ToolRow, ...]
    categories: tuple[CategoryRow, ...]
    subagents: tuple[SubagentRow, ...]
    last_request: LastRequest | None
    events: tuple[Event, ...]
    api_requests: int
    lines_read: int
    bytes_read: int
    sample: Sample = field(compare=False, repr=False)
    # The analysis (engine/analysis) for the chosen profile and budget, and the prompt as a
    # tree; None while it could not be computed (``analysis_error`` says why).
    analysis: Analysis | None = field(default=None, compare=False, repr=False)
    outline: Outline | None = field(default=None, compare=False, repr=False)
    analysis_error: str | None = None
    # The prompt as ctxtop's proxy measured it (live mode), None when not proxied.
    measured: MeasuredPrompt | None = field(default=None, compare=False, repr=False)

    @property
    def compactions(self) -> int:
        return sum(1 for event in self.events if event.kind == "compaction")

    @property
    def what_if(self) -> int | None:
        """The what-if window (``b``) the analysis assumes, or None: the model's own."""
        analysis = self.analysis
        return analysis.thresholds.window if analysis and analysis.budget_overridden else None

    @property
    def foreign_profile(self) -> str | None:
        """The layout profile in effect when it is not the one of the agent that wrote the
        session (``p``), else None."""
        analysis = self.analysis
        if analysis is None or analysis.profile == profile_of(self.agent):
            return None
        return analysis.profile

    @property
    def shown_gauge(self) -> Gauge:
        """The gauge as the analysis sees it: against a what-if window (``b``) and with the
        chosen profile's auto-compact point (``p``), so it agrees with the sections and the
        forecast; the reported gauge while there is no analysis."""
        analysis = self.analysis
        if analysis is None:
            return self.gauge
        limits = analysis.thresholds
        return dataclasses.replace(
            self.gauge,
            window=limits.window,
            editing_at=limits.editing_at,
            compaction_at=limits.compaction_at,
            autocompact_at=limits.autocompact_at,
            window_source="what-if" if analysis.budget_overridden else self.gauge.window_source,
        )


def _tools(sample: Sample) -> tuple[ToolRow, ...]:
    total = sum(tool.result_tokens for tool in sample.tools)
    return tuple(
        ToolRow(
            tool.name, tool.calls, tool.result_tokens, tool.result_tokens / total if total else 0.0
        )
        for tool in sample.tools
    )


# What the log cannot show (system prompt, tool definitions, message framing).
UNATTRIBUTED = "not in the log"


def _categories(sample: Sample) -> tuple[CategoryRow, ...]:
    breakdown = sample.breakdown
    if breakdown is None:
        return ()
    rows = [
        CategoryRow(entry.name.replace("_", " "), entry.tokens, "estimated")
        for entry in breakdown.categories
        if entry.tokens > 0
    ]
    if breakdown.unattributed:
        rows.append(CategoryRow(UNATTRIBUTED, breakdown.unattributed, "inferred"))
    return tuple(sorted(rows, key=lambda row: -row.tokens))


def _subagents(sample: Sample) -> tuple[SubagentRow, ...]:
    return tuple(
        SubagentRow(
            name=sub.description or sub.id or "sub-agent",
            requests=sub.api_requests,
            tokens=sub.context.value,
            source=sub.context.source,
        )
        for sub in sample.subagents
    )


def _last_request(sample: Sample) -> LastRequest | None:
    last = sample.last_request
    if last is None:
        return None
    usage = last.usage
    return LastRequest(
        usage.input_tokens_total,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
        usage.output_tokens,
    )


def _whole_after(post: int | None, outside_log: int | None) -> int | None:
    """A compaction's "after" as the whole context, the gauge's kind of figure: an agent's
    figure smaller than the system prompt and tools counts only the messages (Claude Code's
    postTokens); the next request sends both, so they are added (the gauge's figure then,
    within the tokenizer's difference once a request after it reported the context)."""
    if post is None or not outside_log or post >= outside_log:
        return post
    return post + outside_log


def _events(sample: Sample, outside_log: int | None = None) -> tuple[Event, ...]:
    events = [
        Event(
            "compaction",
            item.line,
            f"{item.trigger} compaction: {short_tokens(item.pre_tokens)}"
            # An "after" that is the agent's own estimate carries the estimate mark.
            f" -> {'≈' if item.post_tokens is not None and item.post_source == 'estimate' else ''}"
            f"{short_tokens(_whole_after(item.post_tokens, outside_log))}",
            item.timestamp,
        )
        for item in sample.compactions
    ]
    events.extend(
        Event(
            "truncation",
            item.line,
            f"truncation: {short_tokens(item.pre_tokens)} -> {short_tokens(item.post_tokens)}"
            f" ({item.messages_removed if item.messages_removed is not None else '?'}"
            " oldest messages dropped, nothing summarised)",
            item.timestamp,
        )
        for item in sample.truncations
    )
    events.extend(
        Event("skipped", item.line, f"skipped line {item.line}: {item.reason}")
        for item in sample.skipped
    )
    events.sort(key=lambda event: event.line)
    return tuple(events)


def whole_after_compaction(sample: Sample, outside_log: int | None) -> Sample:
    """``sample`` with the whole context after a compaction, before the next request reports
    it. An agent's logged "after" that is smaller than what every earlier request sent besides
    the messages (system prompt, tools: ``outside_log``) counts only the messages (Claude
    Code's postTokens); the next request will send both, so the gauge shows both, and the
    context by kind keeps the part not in the log. Once the log shows more of the new history
    than the agent counted, the figure is what the log shows (as the sections count it: the
    panels' parts add up to the gauge in every sample)."""
    context = sample.context
    if context.source != "compaction" or not outside_log or context.value >= outside_log:
        return sample
    breakdown = sample.breakdown
    in_log = breakdown.estimated_total if breakdown is not None else 0
    value = outside_log + max(context.value, in_log)
    whole = dataclasses.replace(context, value=value)
    if breakdown is not None:
        breakdown = dataclasses.replace(breakdown, unattributed=value - in_log)
    return dataclasses.replace(sample, context=whole, breakdown=breakdown)


def _outside_now(sample: Sample, outside_log: int | None) -> int | None:
    breakdown = sample.breakdown
    if breakdown is not None and sample.context.source in ("reported", "calibrated"):
        return breakdown.unattributed or outside_log
    return outside_log


def build_view(sample: Sample, thresholds: Thresholds, outside_log: int | None = None) -> LiveView:
    """``outside_log``: the part of the context the log does not show, as the last reported
    request had it (see ``whole_after_compaction``)."""
    sample = whole_after_compaction(sample, outside_log)
    window = sample.window.tokens or 0
    gauge = Gauge(
        tokens=sample.context.value,
        window=window,
        source=sample.context.source,
        window_source=sample.window.source,
        editing_at=int(window * thresholds.editing),
        compaction_at=int(window * thresholds.compaction),
        autocompact_at=sample.autocompact_at,
    )
    return LiveView(
        agent=sample.agent,
        model=sample.model,
        session_id=sample.session_id,
        title=sample.title,
        file=sample.file,
        last_activity=sample.last_activity,
        gauge=gauge,
        history=sample.history,
        tools=_tools(sample),
        categories=_categories(sample),
        subagents=_subagents(sample),
        last_request=_last_request(sample),
        # Once a request reported it, the system prompt and tools as the sample has them:
        # the same text whichever way the view was built.
        events=_events(sample, _outside_now(sample, outside_log)),
        api_requests=sample.api_requests,
        lines_read=sample.lines_read,
        bytes_read=sample.bytes_read,
        sample=sample,
    )

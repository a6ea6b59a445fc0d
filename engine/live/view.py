"""``LiveView``: one sample of a live session, everything the dashboard shows, already computed.

Built from the session report (``build_report``), so the fill % is the one ``ctxtop report``
gives. Each view is self-contained and immutable, so views can be kept and replayed.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from engine.agents import profile_of
from engine.analysis.prompt_outline import Outline
from engine.analysis.snapshot import Analysis
from engine.config import Thresholds
from engine.proxy.measured import MeasuredPrompt
from engine.sessions.model import SessionState

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
        """The same rounding as ``fill_percent`` in ``ctxtop report``."""
        return round(100 * self.fill, 1)

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
    report: dict[str, Any] = field(compare=False, repr=False)
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


def request_history(state: SessionState) -> tuple[int, ...]:
    """Context size of every request of the main session, in log order: prompt + output."""
    return tuple(
        response.usage.input_tokens_total + response.usage.output_tokens
        for response in state.responses.values()
    )


def _tools(report: dict[str, Any]) -> tuple[ToolRow, ...]:
    total = sum(entry["result_tokens"] for entry in report["tools"]) or 0
    return tuple(
        ToolRow(
            name=entry["name"],
            calls=entry["calls"],
            tokens=entry["result_tokens"],
            share=entry["result_tokens"] / total if total else 0.0,
        )
        for entry in report["tools"]
    )


# What the log cannot show (system prompt, tool definitions, message framing).
UNATTRIBUTED = "not in the log"


def _categories(report: dict[str, Any]) -> tuple[CategoryRow, ...]:
    breakdown = report.get("context_breakdown")
    if not breakdown:
        return ()
    rows = [
        CategoryRow(entry["category"].replace("_", " "), int(entry["tokens"]), "estimated")
        for entry in breakdown["categories"]
    ]
    if breakdown["unattributed"]:
        rows.append(CategoryRow(UNATTRIBUTED, int(breakdown["unattributed"]), "inferred"))
    return tuple(sorted(rows, key=lambda row: -row.tokens))


def _subagents(report: dict[str, Any]) -> tuple[SubagentRow, ...]:
    return tuple(
        SubagentRow(
            name=str(entry["description"] or entry["id"] or "sub-agent"),
            requests=int(entry["api_requests"]),
            tokens=int(entry["context_tokens"]["value"]),
            source=str(entry["context_tokens"]["source"]),
        )
        for entry in report["subagents"]
    )


def _last_request(report: dict[str, Any]) -> LastRequest | None:
    last = report["last_request"]
    if not last:
        return None
    return LastRequest(
        prompt=int(last["input_tokens_total"]),
        cache_read=int(last["cache_read_tokens"]),
        cache_write=int(last["cache_write_tokens"]),
        output=int(last["output_tokens"]),
    )


def short_tokens(tokens: int | None) -> str:
    """12345 -> 12.3k (the event log's figures); None -> ?."""
    if tokens is None:
        return "?"
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)


def _whole_after(post: int | None, outside_log: int | None) -> int | None:
    """A compaction's "after" as the whole context, the gauge's kind of figure: an agent's
    figure smaller than the system prompt and tools counts only the messages (Claude Code's
    postTokens); the next request sends both, so they are added (as the session has them now:
    the gauge's figure then, within the tokenizer's drift)."""
    if post is None or not outside_log or post >= outside_log:
        return post
    return post + outside_log


def _events(report: dict[str, Any], outside_log: int | None = None) -> tuple[Event, ...]:
    events = [
        Event(
            "compaction",
            item["line"],
            f"{item['trigger']} compaction: {short_tokens(item['pre_tokens'])}"
            # An "after" that is the agent's own estimate carries the estimate mark.
            f" -> {'≈' if item.get('post_tokens_source') == 'estimate' else ''}"
            f"{short_tokens(_whole_after(item['post_tokens'], outside_log))}",
            item["timestamp"],
        )
        for item in report["compactions"]
    ]
    events.extend(
        Event(
            "truncation",
            item["line"],
            f"truncation: {short_tokens(item['pre_tokens'])} -> {short_tokens(item['post_tokens'])}"
            f" ({item['messages_removed'] if item['messages_removed'] is not None else '?'}"
            " oldest messages dropped, nothing summarised)",
            item["timestamp"],
        )
        for item in report["truncations"]
    )
    events.extend(
        Event("skipped", item["line"], f"skipped line {item['line']}: {item['reason']}")
        for item in report["skipped_lines"]
    )
    events.sort(key=lambda event: event.line)
    return tuple(events)


def whole_after_compaction(report: dict[str, Any], outside_log: int | None) -> dict[str, Any]:
    """``report`` with the whole context after a compaction, before the next request reports
    it. An agent's logged "after" that is smaller than what every earlier request sent besides
    the messages (system prompt, tools: ``outside_log``) counts only the messages (Claude
    Code's postTokens); the next request will send both, so the gauge shows both, and the
    context by kind keeps the part not in the log. Once the log shows more of the new history
    than the agent counted, the figure is what the log shows (as the sections count it: the
    panels' parts add up to the gauge in every sample)."""
    context = report["context_tokens"]
    if context["source"] != "compaction" or not outside_log or context["value"] >= outside_log:
        return report
    breakdown = report.get("context_breakdown")
    in_log = int(breakdown.get("estimated_total") or 0) if breakdown else 0
    value = outside_log + max(int(context["value"]), in_log)
    adjusted = {**report, "context_tokens": {**context, "value": value}}
    if breakdown:
        adjusted["context_breakdown"] = {**breakdown, "unattributed": value - in_log}
    return adjusted


def _outside_now(report: dict[str, Any], outside_log: int | None) -> int | None:
    breakdown = report.get("context_breakdown")
    if breakdown and report["context_tokens"]["source"] in ("reported", "calibrated"):
        return int(breakdown["unattributed"]) or outside_log
    return outside_log


def build_view(
    report: dict[str, Any],
    state: SessionState,
    thresholds: Thresholds,
    outside_log: int | None = None,
) -> LiveView:
    """``outside_log``: the part of the context the log does not show, as the last reported
    request had it (see ``whole_after_compaction``)."""
    report = whole_after_compaction(report, outside_log)
    window = int(report["context_window"] or 0)
    context = report["context_tokens"]
    gauge = Gauge(
        tokens=int(context["value"]),
        window=window,
        source=str(context["source"]),
        window_source=str(report["context_window_source"]),
        editing_at=int(window * thresholds.editing),
        compaction_at=int(window * thresholds.compaction),
        autocompact_at=report["autocompact_at"],
    )
    return LiveView(
        agent=report["agent"],
        model=report["model"],
        session_id=report["session_id"],
        title=report["title"],
        file=report["file"],
        last_activity=report["last_activity"],
        gauge=gauge,
        history=request_history(state),
        tools=_tools(report),
        categories=_categories(report),
        subagents=_subagents(report),
        last_request=_last_request(report),
        # Once a request reported it, the system prompt and tools as the report has them:
        # the same text whichever way the view was built.
        events=_events(report, _outside_now(report, outside_log)),
        api_requests=int(report["api_requests"]),
        lines_read=int(report["lines_read"]),
        report=report,
    )

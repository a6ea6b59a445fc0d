"""``LiveView``: one sample of a live session, everything the dashboard shows, already computed.

Built from the session's typed ``Sample`` (engine/sessions/sample.py), the one ``ctxtop report``
serializes, so the fill % is the one it gives (``build_view`` in session.py). Each view is
self-contained and immutable, so views can be kept and replayed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxtop.engine.agents import profile_of
from ctxtop.engine.analysis.prompt_outline import Outline
from ctxtop.engine.analysis.snapshot import Analysis
from ctxtop.engine.models.window import Window, unknown_window_note
from ctxtop.engine.proxy.measured_prompt import MeasuredPrompt
from ctxtop.engine.sessions.limits import TriggerPoints, fill_level
from ctxtop.engine.sessions.prompt_parts import AgentPart
from ctxtop.engine.sessions.sample import Sample, fill_percent


@dataclass(frozen=True, slots=True)
class Gauge:
    """The context gauge: fill against the window, with the markers drawn on it."""

    tokens: int
    window: int
    source: str  # provenance of ``tokens``: reported | calibrated | estimated | compaction
    window_source: str  # logged | cli | user file | model id | dataset | assumed | what-if
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
        points = TriggerPoints(self.editing_at, self.compaction_at)
        return fill_level(self.tokens, points, self.autocompact_at)

    @property
    def window_note(self) -> str | None:
        """ "window unknown, assuming 200k" when no source knows the model's window."""
        return unknown_window_note(Window(self.window, self.window_source))

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
    source: str  # estimated (the tokenizer) | inferred (the context figure minus the rest) | logged


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

    kind: str  # compaction | microcompaction | truncation | skipped | action
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
    history: Sequence[int]  # context tokens of each request, oldest first
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
    # Epoch seconds: when the agent last wrote the session's files (the sessions table's clock).
    last_write: float | None = field(default=None, compare=False)
    # The prompt as ctxtop's proxy measured it (live mode), None when not proxied.
    measured: MeasuredPrompt | None = field(default=None, compare=False, repr=False)

    @property
    def compactions(self) -> int:
        return sum(1 for event in self.events if event.kind == "compaction")

    @property
    def unknown_records(self) -> str | None:
        """The notice of records of types ctxtop does not know (None: there are none)."""
        return self.sample.record_types.notice

    @property
    def agent_split(self) -> tuple[AgentPart, ...]:
        """The agent's own split of the last prompt (VS Code Copilot Chat's
        ``promptTokenDetails``), shown beside the profile's sections; empty: none logged."""
        last = self.sample.last_request
        return last.agent_split if last is not None else ()

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
            window_source=limits.window_source,
        )

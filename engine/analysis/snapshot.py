"""The analysis snapshot: one immutable object per session state (the TUI renders it and
``ctxtop report --json`` prints it under ``analysis``, see ``to_json``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

# Bumped whenever a field of ``to_json`` changes meaning or goes away.
ANALYSIS_VERSION = 1


@dataclass(frozen=True, slots=True)
class Section:
    name: str
    label: str
    budget: int  # tokens the profile's layout allocates to it
    tokens: int
    share: float  # of the window
    provenance: str  # reported | calibrated | estimated | inferred | logged | measured
    limit: int | None = None  # its TokenLimit, if any
    priority: int | None = None


@dataclass(frozen=True, slots=True)
class PromptNode:
    """A node of the profile's prompt tree, as laid out for the current context."""

    id: str
    section: str
    tokens: int  # after any truncation the profile applies
    priority: int | None
    prunable: bool
    # The renderer starts pruning the node once the budget is below this (its sizes: 3 tokens of
    # framing per message), and the same as the fill of the window the content then has.
    pruned_at_budget: int | None
    pruned_at_fill: float | None


@dataclass(frozen=True, slots=True)
class RenderedElement:
    """A section or history round as the prompt renderer laid it out."""

    id: str
    budget: int | None
    tokens_before: int  # before pruning (the renderer adds 3 tokens of framing per message)
    tokens: int  # what is left of it in the result
    pruned: bool
    reason: str | None


@dataclass(frozen=True, slots=True)
class Pruned:
    id: str
    tokens: int
    reason: str


@dataclass(frozen=True, slots=True)
class Thresholds:
    window: int
    window_source: str
    budget: int
    output_reserve: int
    autocompact_at: int | None
    autocompact_buffer: int | None
    editing_at: int
    compaction_at: int
    editing_fraction: float
    compaction_fraction: float


@dataclass(frozen=True, slots=True)
class Breakpoint:
    after: str  # what the cache marker follows
    protected_tokens: int  # the prefix it keeps cached


@dataclass(frozen=True, slots=True)
class CacheRequest:
    response_id: str
    line: int
    prompt: int
    read: int
    write: int
    uncached: int
    logged_read: int | None
    logged_write: int | None
    read_difference: int | None  # simulated minus logged
    write_difference: int | None
    cost: float | None
    logged_cost: float | None
    within_5pct: bool | None  # simulated read and write both within 5 % of the logged ones
    read_within_5pct: bool | None
    write_within_5pct: bool | None


@dataclass(frozen=True, slots=True)
class CacheSummary:
    style: str
    ttl_seconds: float
    requests: tuple[CacheRequest, ...]
    read: int
    write: int
    uncached: int
    cost: float | None
    logged_cost: float | None
    agreement_pct: float | None  # share of requests with logged cache fields that agree
    read_agreement_pct: float | None  # the same for the read figure alone
    write_agreement_pct: float | None  # the same for the write figure alone


@dataclass(frozen=True, slots=True)
class LargeResult:
    tool_call_id: str
    tokens: int


@dataclass(frozen=True, slots=True)
class ToolStat:
    name: str
    calls: int
    result_tokens: int
    share: float  # of the window
    json_results: int
    json_savings: int  # tokens minified JSON without null fields would save
    largest: tuple[LargeResult, ...]


@dataclass(frozen=True, slots=True)
class Forecast:
    requests_left: float | None
    low: float | None
    high: float | None
    growth_per_request: float | None
    growth_stdev: float | None
    samples: int
    target: int | None  # the token count the forecast runs to (auto-compact point)
    basis: str


@dataclass(frozen=True, slots=True)
class AccuracyRow:
    response_id: str
    reported: int
    estimated: int
    calibrated: int | None
    error_pct: float
    calibrated_error_pct: float | None


@dataclass(frozen=True, slots=True)
class Accuracy:
    rows: tuple[AccuracyRow, ...]
    requests: int
    mean_abs_error_pct: float | None
    max_abs_error_pct: float | None
    calibrated_mean_abs_error_pct: float | None
    encoding: str


@dataclass(frozen=True, slots=True)
class Relevance:
    tool_call_id: str
    tool: str
    tokens: int
    score: float


@dataclass(frozen=True, slots=True)
class Analysis:
    profile: str
    profile_source: str
    budget: int
    budget_overridden: bool
    context_tokens: int
    context_source: str
    sections: tuple[Section, ...]
    residual_tokens: int
    nodes: tuple[PromptNode, ...]
    pruned: tuple[Pruned, ...]
    render: str  # what laid the tree out: the prompt renderer (engine/render), on every path
    render_tokens: int | None  # the renderer's token count of the result
    render_error: str | None  # e.g. BudgetExceededError when what cannot be pruned is too big
    render_elements: tuple[RenderedElement, ...]  # the sections and history rounds as rendered
    thresholds: Thresholds
    breakpoints: tuple[Breakpoint, ...]
    cache: CacheSummary
    tools: tuple[ToolStat, ...]
    history: Sequence[int]  # context size after every request (a view: RequestHistory)
    history_fill: Sequence[float]  # the same as a fraction of the window (a view)
    forecast: Forecast
    estimate_accuracy: Accuracy
    relevance: tuple[Relevance, ...]
    # API tokens per tokenizer token the sections and the prompt tree are corrected with
    # (engine/sessions/tokenizer_factor.py; 1: nothing learnt, they are tokenizer estimates).
    tokenizer_factor: float = 1.0
    # The system prompt and tools in the tokenizer's own count (None: unknown). A compaction's
    # "after" adds this figure: it is fixed once a request follows the compaction, where the
    # calibrated section moves with the factor each new request teaches.
    system_counted: int | None = None

    def to_json(self) -> dict[str, Any]:
        # msgspec's asdict, ten times faster (0.7 s for a 100 MB session's analysis).
        data: dict[str, Any] = msgspec.to_builtins(self, enc_hook=_sequence)
        data["version"] = ANALYSIS_VERSION
        accuracy = data["estimate_accuracy"]
        accuracy["per_request"] = accuracy.pop("rows")
        return data


def _sequence(value: Any) -> Any:
    """What msgspec does not know (the requests' sizes, a ``RequestHistory``) as a list."""
    if isinstance(value, Sequence):
        return list(value)
    raise NotImplementedError(type(value))

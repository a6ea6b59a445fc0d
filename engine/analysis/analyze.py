"""Session state -> analysis snapshot, kept incrementally.

An ``Analyzer`` lives beside one session's reader. Counting is what costs: block token counts are
kept in the session's ledger (engine/sessions/ledger.py), JSON audits and relevance terms by tool
call, the cache simulation by request; each call then only walks the context's per-message sums.

``Analyzer.analyze`` is a pipeline: count the context (``_count``), take the figure the gauge
shows (``_context_figure``) and the limits (``_thresholds``), lay the profile's prompt tree out
with the prompt renderer (``_lay_out``: the sections' budgets, what is pruned and the nodes a
smaller budget would prune), then the sections, the cache simulation and the rest.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ctxtop.engine.analysis.accuracy import RequestPoint, accuracy
from ctxtop.engine.analysis.cache_history import HistoryLog
from ctxtop.engine.analysis.cache_shapes import ShapeBuilder, model_prices
from ctxtop.engine.analysis.cache_shared import shared_evidence
from ctxtop.engine.analysis.cache_sim import CacheSimulator, SharedEvidence
from ctxtop.engine.analysis.forecast import RECENT, forecast
from ctxtop.engine.analysis.placement import OnContext, newest_run_start
from ctxtop.engine.analysis.placement import on_context as find_on_context
from ctxtop.engine.analysis.profiles import CacheSpec
from ctxtop.engine.analysis.relevance import RelevanceIndex
from ctxtop.engine.analysis.render_tree import (
    RENDERER,
    ElementCache,
    PromptTree,
    Rendered,
    build_tree,
    prompt_nodes,
    render_tree,
)
from ctxtop.engine.analysis.sections import content_names, last_user_index
from ctxtop.engine.analysis.setup import Setup
from ctxtop.engine.analysis.snapshot import Analysis, CacheSummary, PromptNode, Section, Thresholds
from ctxtop.engine.analysis.tools import ToolAudit
from ctxtop.engine.models.window import WHAT_IF
from ctxtop.engine.sessions.ledger import Ledger
from ctxtop.engine.sessions.limits import trigger_points
from ctxtop.engine.sessions.model import Message, SessionState
from ctxtop.engine.sessions.prompt_parts import logged_prompt
from ctxtop.engine.sessions.request_history import SequenceView
from ctxtop.engine.sessions.sample import ContextTokens, context_tokens
from ctxtop.engine.sessions.tokenizer_factor import NONE, TokenizerFactor, learn
from ctxtop.engine.tokens.encoding import Encoding


@dataclass(frozen=True, slots=True)
class Counts:
    """The context counted: per message, running sums, and the system prompt and tools: counted
    from the log when it records their text (``logged``), else inferred from the first request
    on the context (``inferred``), else the agent's own logged count of them (``logged``:
    Copilot CLI's, which predicts its requests less well than the API's figures do), else
    ``unknown``."""

    context: Sequence[Message]
    tokens: list[int]
    cumulative: list[int]  # tokens before each message (and after the last)
    on_context: list[OnContext]
    system: int
    system_source: str  # logged | inferred | unknown
    # What the sections and the prompt tree show: each count times the session's tokenizer
    # factor (a logged system prompt too: it is the same tokenizer's count of text), the
    # inferred system prompt inferred with those (the cache simulation keeps to the
    # tokenizer's counts above).
    factor: TokenizerFactor
    shown: list[int]
    shown_system: int

    @property
    def system_known(self) -> bool:
        return self.system_source != "unknown"


@dataclass(frozen=True, slots=True)
class Layout:
    """The prompt tree as the renderer laid it out, and what each content holds."""

    used: Counter[str]  # content name -> ctxtop's tokens (the tokenizer's times the factor)
    tree: PromptTree
    rendered: Rendered
    nodes: tuple[PromptNode, ...]


def _share(tokens: int, window: int) -> float:
    return round(tokens / window, 4) if window else 0.0


class RequestShares(SequenceView[float]):
    """Each request's context size as a share of the window, worked out when read: an analysis
    of every update hands it out without a float per request of the history."""

    __slots__ = ("_sizes", "_window")

    def __init__(self, sizes: Sequence[int], window: int) -> None:
        self._sizes = sizes
        self._window = window

    def __len__(self) -> int:
        return len(self._sizes)

    def _at(self, index: int) -> float:
        return _share(self._sizes[index], self._window)

    def __iter__(self) -> Iterator[float]:
        window = self._window
        return (_share(size, window) for size in self._sizes)


class Analyzer:
    """Keeps what an analysis counted and simulated between the updates of one session."""

    def __init__(self, *, ledger: Ledger | None = None) -> None:
        self.ledger = ledger or Ledger()  # the token counts (a live session shares its own)
        self._elements = ElementCache()
        self._rendered: tuple[list[object], Rendered] | None = None  # the last tree's
        self._tools = ToolAudit()
        self._relevance = RelevanceIndex()
        self._shapes = ShapeBuilder()
        self._history_log = HistoryLog()
        self._simulator: CacheSimulator | None = None
        self._simulator_key: tuple[str, CacheSpec] | None = None
        self._shared: tuple[tuple[tuple[int, ...], ...], tuple[SharedEvidence, ...]] = ((), ())

    # --- counting -------------------------------------------------------------------------

    def _count(self, state: SessionState, encoding: Encoding) -> Counts:
        context = state.context
        tokens = self.ledger.message_sizes(context, encoding)
        cumulative = [0]
        for value in tokens:
            cumulative.append(cumulative[-1] + value)
        on_context = find_on_context(state, context, tokens)
        factor = learn(state, self.ledger, encoding, fit_calls=False)
        shown = factor.spread(tokens)
        logged = logged_prompt(state.prompt_parts, state.agent_counts, encoding)
        if logged is not None and logged.counted:
            return Counts(
                context,
                tokens,
                cumulative,
                on_context,
                logged.tokens,
                "logged",
                factor,
                shown,
                factor.apply_system(logged.tokens),
            )
        system = self._inferred_system(state, on_context, encoding, NONE)
        if system is None and logged is not None:
            # No request to infer it from: the agent's own count, as logged (no tokenizer's).
            size = logged.tokens
            return Counts(
                context, tokens, cumulative, on_context, size, "logged", factor, shown, size
            )
        shown_system = system
        if factor.learned:
            shown_system = self._inferred_system(state, on_context, encoding, factor)
        return Counts(
            context,
            tokens,
            cumulative,
            on_context,
            system or 0,
            "unknown" if system is None else "inferred",
            factor,
            shown,
            shown_system or 0,
        )

    def _inferred_system(
        self,
        state: SessionState,
        on_context: list[OnContext],
        encoding: Encoding,
        factor: TokenizerFactor,
    ) -> int | None:
        """The system prompt and tools: the first request on the context (of the newest
        model's requests) less the messages before it. After a compaction, until a request
        follows it, the first request's on the context before it (the state keeps that
        context), so that a live session and a cold read of the same lines infer the same
        size."""
        kept = state.context_before_rewrite
        if not on_context and kept is not None:
            messages, since = kept
            tokens = self.ledger.message_sizes(messages, encoding)
            on_context = find_on_context(state, messages, tokens, since)
        fork = state.fork_estimate
        if not on_context and fork is not None:
            # A fork ctxtop wrote, no request on it yet: what its estimate holds besides
            # the messages it was made of.
            before = [message for message in state.context if message.line <= fork.line]
            return max(fork.tokens - sum(self.ledger.message_sizes(before, encoding)), 0)
        if not on_context:
            return None
        first = newest_run_start(on_context)
        return max(first.response.usage.input_tokens_total - factor.apply(first.before), 0)

    # --- parts ----------------------------------------------------------------------------

    def _lay_out(self, setup: Setup, counts: Counts, budget: int) -> Layout:
        """The profile's prompt tree rendered to the budget: its budgets and pruning (rendered
        again only when the tree changed)."""
        profile = setup.profile
        names = content_names(profile, counts.context)
        used: Counter[str] = Counter()
        for name, size in zip(names, counts.tokens, strict=True):
            used[name] += size
        for name in used:  # each section's count times the factor
            used[name] = counts.factor.apply(used[name])
        used["system"] = counts.shown_system
        tree = build_tree(
            profile,
            counts.context,
            names,
            counts.shown,
            budget,
            counts.shown_system,
            self._elements,
        )
        if self._rendered is not None and self._rendered[0] == tree.key:
            rendered = self._rendered[1]
        else:
            rendered = render_tree(tree, budget)
            self._rendered = (tree.key, rendered)
        return Layout(used, tree, rendered, prompt_nodes(tree, rendered, budget, setup.window))

    # --- the cache --------------------------------------------------------------------------

    def _simulator_for(self, setup: Setup) -> CacheSimulator:
        # Each request carries its own model (prices, minimum cacheable prefix): another model
        # is no reason to simulate everything again.
        cache = setup.cache
        key = (setup.profile.name, cache)  # (the settings' TTL is in the spec)
        if self._simulator is None or self._simulator_key != key:
            self._simulator = CacheSimulator(
                cache.style,
                ttl_seconds=cache.ttl_seconds,
                granularity=cache.granularity,
                min_cacheable=setup.model.min_cacheable_tokens,
                prices=None,
            )
            self._simulator_key = key
        return self._simulator

    def _shared_evidence(self, related: Sequence[SessionState]) -> tuple[SharedEvidence, ...]:
        # Worked out again only when one of the other conversations has new or revised responses.
        key = tuple(
            (id(other), len(other.responses), other.totals.total, other.totals.cache_write_tokens)
            for other in related
        )
        if key != self._shared[0]:
            self._shared = (key, shared_evidence(related))
        return self._shared[1]

        # --- the whole ----------------------------------------------------------------------------

    def analyze(
        self,
        state: SessionState,
        setup: Setup,
        encoding: Encoding,
        *,
        related: Sequence[SessionState] = (),
    ) -> Analysis:
        """``related``: other conversations on the same prompt cache (a sub-agent's parent
        session and its other sub-agents), for the cache simulation."""
        counts = self._count(state, encoding)
        figure = _context_figure(state, self.ledger, encoding, counts)
        thresholds = _thresholds(setup)
        layout = self._lay_out(setup, counts, thresholds.budget)
        sections = _sections(setup, layout, counts, figure, thresholds)
        content_sum = sum(section.tokens for section in sections[: len(setup.profile.sections)])
        rendered = layout.rendered
        return Analysis(
            profile=setup.profile.name,
            profile_source=setup.profile.source,
            budget=thresholds.budget,
            budget_overridden=setup.window_source == WHAT_IF,
            context_tokens=figure.value,
            context_source=figure.source,
            sections=tuple(sections),
            residual_tokens=figure.value - content_sum if figure.source != "estimated" else 0,
            nodes=layout.nodes,
            pruned=rendered.pruned,
            render=RENDERER,
            render_tokens=rendered.token_count,
            render_error=rendered.error,
            render_elements=rendered.elements,
            thresholds=thresholds,
            # Where the next markers go, in the sections' figures (the simulation keeps to the
            # tokenizer's).
            breakpoints=self._shapes.next_breakpoints(
                setup,
                counts.context,
                list(itertools.accumulate(counts.shown, initial=0)),
                counts.shown_system,
            ),
            cache=self._cache(state, setup, counts, related),
            tokenizer_factor=counts.factor.value,
            system_counted=counts.system if counts.system_known else None,
            tools=self._tools.stats(
                state, counts.context, setup.window, encoding, self.ledger.counted
            ),
            **self._trend(state, setup, counts, figure, thresholds, encoding),
        )

    def _cache(
        self,
        state: SessionState,
        setup: Setup,
        counts: Counts,
        related: Sequence[SessionState],
    ) -> CacheSummary:
        """The live context's requests simulated; the history before them taken from the log."""
        builder = self._shapes
        shapes = builder.shapes(
            state, setup, counts.on_context, counts.context, counts.cumulative, counts.system
        )
        history = self._history_log.seed(
            state,
            builder.history,
            logged=builder.logged,
            prices_of=lambda model: model_prices(model, setup),
            terms=(setup.model.prices,),
            entries=builder.carried,
        )
        return self._simulator_for(setup).run(shapes, self._shared_evidence(related), history)

    def _trend(
        self,
        state: SessionState,
        setup: Setup,
        counts: Counts,
        figure: ContextTokens,
        thresholds: Thresholds,
        encoding: Encoding,
    ) -> dict[str, Any]:
        """The context over the requests, the forecast, the estimates' accuracy and the
        relevance of the results on the context."""
        points = [
            RequestPoint(
                item.response.key,
                item.response.usage.input_tokens_total,
                item.response.usage.output_tokens,
                item.before,
                item.answer,
            )
            for item in counts.on_context
        ]
        autocompact = thresholds.autocompact_at
        history = state.request_history()
        return {
            "history": history,
            "history_fill": RequestShares(history, setup.window),
            # An agent without auto-compaction (Copilot) prunes once the budget is full; the
            # forecast reads only the last requests since the last compaction or truncation.
            "forecast": forecast(
                state.requests_since(state.last_rewrite_line, RECENT + 1),
                figure.value,
                autocompact if autocompact is not None else thresholds.budget,
                "auto-compaction" if autocompact is not None else "the budget is full",
            ),
            "estimate_accuracy": accuracy(points, counts.system, encoding.name),
            "relevance": self._relevance.rank(
                state, counts.context, last_user_index(counts.context), self.ledger.counted
            ),
        }


def _context_figure(
    state: SessionState, ledger: Ledger, encoding: Encoding, counts: Counts
) -> ContextTokens:
    figure = context_tokens(state, ledger, encoding, counts.factor)
    if figure.source == "compaction" and counts.system_known and figure.value < counts.shown_system:
        # An agent's "after" smaller than the system prompt counts only the messages
        # (Claude Code's postTokens): the next request sends both (engine/live/view.py). Once
        # the log shows more of the new history than the agent counted, what the log shows:
        # the sections add up to the figure in every sample.
        messages = max(figure.value, sum(counts.shown))
        figure = dataclasses.replace(figure, value=messages + counts.shown_system)
    return figure


def _thresholds(setup: Setup) -> Thresholds:
    reserve = setup.profile.reserve_for(setup.model.max_output)
    budget = max(setup.window - reserve, 0)
    autocompact = setup.autocompact_at
    points = trigger_points(setup.window, setup.triggers)
    return Thresholds(
        window=setup.window,
        window_source=setup.window_source,
        budget=budget,
        output_reserve=reserve,
        autocompact_at=autocompact,
        autocompact_buffer=max(budget - autocompact, 0) if autocompact is not None else None,
        editing_at=points.editing_at,
        compaction_at=points.compaction_at,
        editing_fraction=setup.triggers.editing,
        compaction_fraction=setup.triggers.compaction,
    )


def _label(label: str, source: str) -> str:
    """A profile's system label says how it is known when inferred (the usual case); counted
    from the log, it says so."""
    return label.replace("(inferred)", "(from the log)") if source == "logged" else label


def _sections(
    setup: Setup,
    layout: Layout,
    counts: Counts,
    figure: ContextTokens,
    thresholds: Thresholds,
) -> list[Section]:
    """The profile's sections with the renderer's budgets, then the auto-compaction buffer, the
    output reserve and the free space: together the window."""
    window, budget = setup.window, thresholds.budget
    system = counts.system_source
    content = "calibrated" if counts.factor.learned else "estimated"
    sections = [
        Section(
            name=spec.name,
            label=_label(spec.label, system) if spec.content == "system" else spec.label,
            budget=layout.rendered.budgets.get(spec.name, 0),
            tokens=layout.used[spec.content],
            share=_share(layout.used[spec.content], window),
            provenance=system if spec.content == "system" else content,
            limit=spec.limit(budget),
            priority=spec.priority,
        )
        for spec in setup.profile.sections
    ]
    buffer = thresholds.autocompact_buffer
    if buffer is not None:
        sections.append(
            Section(
                "autocompact_buffer",
                "kept free for auto-compaction",
                buffer,
                buffer,
                _share(buffer, window),
                "inferred",
            )
        )
    reserve = thresholds.output_reserve
    if reserve:  # the window less the budget: the gauge's reserved part holds it too
        sections.append(
            Section(
                "output_reserve",
                "kept free for model output",
                reserve,
                reserve,
                _share(reserve, window),
                "inferred",
            )
        )
    free = max(budget - (buffer or 0) - figure.value, 0)
    provenance = (
        "estimated"
        if figure.source == "estimated"
        else "logged"
        if figure.source == "logged"
        else "calibrated"
        if figure.estimated or figure.source == "calibrated"  # (a microcompaction's saving)
        else "reported"
    )
    sections.append(Section("free", "free space", free, free, _share(free, window), provenance))
    return sections

"""Session state -> analysis snapshot, kept incrementally.

An ``Analyzer`` lives beside one session's reader. Counting is what costs: block token counts are
cached on the blocks (engine/sessions/report.py), JSON audits and relevance terms by tool call,
the cache simulation by request; each call then only walks the context's per-message sums.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence

from engine.analysis.accuracy import RequestPoint, accuracy
from engine.analysis.cache_shapes import ShapeBuilder
from engine.analysis.cache_shared import shared_evidence
from engine.analysis.cache_sim import CacheSimulator, SharedEvidence
from engine.analysis.forecast import forecast
from engine.analysis.placement import on_context as find_on_context
from engine.analysis.profiles import CacheSpec, Profile
from engine.analysis.relevance import RelevanceIndex
from engine.analysis.render_tree import RENDERER, build_tree, render_tree
from engine.analysis.sections import (
    CONVERSATION,
    Allocation,
    allocate,
    content_kind,
    is_typed_user_message,
    last_user_index,
    section_of,
)
from engine.analysis.setup import Setup
from engine.analysis.snapshot import (
    Analysis,
    Section,
    Thresholds,
)
from engine.analysis.tools import ToolAudit
from engine.analysis.tree import NodeInput, lay_out, truncated
from engine.sessions.model import Message, SessionState
from engine.sessions.report import (
    BULK,
    cached,
    context_tokens,
    count_blocks,
)
from engine.tokens.encoding import Encoding

HISTORY_PRIORITY_STEP = 1  # PrioritizedList: each older round one priority lower


class Analyzer:
    """``renderer``: lay the profile's tree out with the prompt renderer (engine/render), for
    its budgets, pruning and reasons; otherwise ctxtop's section allocation and pruning order
    (fast enough for every live update)."""

    def __init__(self, *, renderer: bool = False) -> None:
        self.renderer = renderer
        self._system: int | None = None
        self._tools = ToolAudit()
        self._relevance = RelevanceIndex()
        self._shapes = ShapeBuilder()
        self._simulator: CacheSimulator | None = None
        self._simulator_key: tuple[str, str, CacheSpec] | None = None
        self._shared: tuple[tuple[tuple[int, ...], ...], tuple[SharedEvidence, ...]] = ((), ())

    # --- counting -------------------------------------------------------------------------

    def _message_tokens(self, context: Sequence[Message], encoding: Encoding) -> list[int]:
        fresh = [b for m in context for b in m.blocks if b.tokens is None]
        if fresh:
            count_blocks(fresh, cached(encoding) if len(fresh) >= BULK else encoding)
        return [sum(block.tokens or 0 for block in message.blocks) for message in context]

    # --- parts ----------------------------------------------------------------------------

    def _history(self, state: SessionState) -> tuple[list[int], list[int]]:
        """Context size after every request, and those since the last compaction (or
        truncation)."""
        since = state.last_rewrite_line
        every: list[int] = []
        recent: list[int] = []
        for response in state.responses.values():
            size = response.usage.input_tokens_total + response.usage.output_tokens
            every.append(size)
            if response.line > since:
                recent.append(size)
        return every, recent

    # --- the cache --------------------------------------------------------------------------

    def _simulator_for(self, setup: Setup) -> CacheSimulator:
        cache = setup.cache
        key = (setup.profile.name, setup.model.model, cache)
        if self._simulator is None or self._simulator_key != key:
            self._simulator = CacheSimulator(
                cache.style,
                ttl_seconds=cache.ttl_seconds,
                granularity=cache.granularity,
                min_cacheable=setup.model.min_cacheable_tokens,
                prices=setup.model.prices,
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
        profile = setup.profile
        context = state.context
        tokens = self._message_tokens(context, encoding)
        cumulative = [0]
        for value in tokens:
            cumulative.append(cumulative[-1] + value)
        on_context = find_on_context(state, context, tokens)
        if on_context:
            first = on_context[0]
            self._system = max(first.response.usage.input_tokens_total - first.before, 0)
        system = self._system or 0
        system_known = self._system is not None

        # Sections.
        contents = frozenset(spec.content for spec in profile.sections)
        user_index = last_user_index(context)
        used: Counter[str] = Counter()
        kinds = [content_kind(message) for message in context]
        for index, kind in enumerate(kinds):
            name = section_of(kind, index, user_index, contents)
            if name not in contents and kind != CONVERSATION:
                name = "messages" if "messages" in contents else "history"
            used[name] += tokens[index]
        used["system"] = system
        figure = context_tokens(state, encoding)
        if figure.source == "compaction" and system_known and figure.value < system:
            # An agent's "after" smaller than the system prompt counts only the messages
            # (Claude Code's postTokens): the next request sends both (engine/live/view.py).
            figure = dataclasses.replace(figure, value=figure.value + system)
        reserve = profile.reserve_for(setup.model.max_output)
        budget = max(setup.window - reserve, 0)

        # The tree: what a full budget would prune.
        nodes_in, fixed = self._nodes(
            profile, context, kinds, tokens, user_index, contents, budget, system
        )
        nodes, pruned = lay_out(nodes_in, fixed, budget, setup.window)
        trimmed: Counter[str] = Counter()
        for node in nodes_in:
            trimmed[node.section] += node.tokens
        section_used = [
            trimmed[spec.name] if spec.priority is not None else used[spec.content]
            for spec in profile.sections
        ]
        allocation = allocate(profile.sections, section_used, budget)
        rendered = None
        # Agents that compact instead of pruning (no section has a priority) have nothing for
        # the renderer to decide.
        if self.renderer and any(spec.priority is not None for spec in profile.sections):
            tree = build_tree(profile, context, kinds, tokens, user_index, budget, system)
            rendered = render_tree(tree, budget)
            pruned = list(rendered.pruned)
            allocation = [
                Allocation(rendered.budgets.get(spec.name, alloc.budget), alloc.used)
                for spec, alloc in zip(profile.sections, allocation, strict=True)
            ]
        sections = [
            Section(
                name=spec.name,
                label=spec.label,
                budget=alloc.budget,
                tokens=used[spec.content],
                share=round(used[spec.content] / setup.window, 4) if setup.window else 0.0,
                provenance=(
                    ("inferred" if system_known else "unknown")
                    if spec.content == "system"
                    else "estimated"
                ),
                limit=spec.limit(budget),
                priority=spec.priority,
            )
            for spec, alloc in zip(profile.sections, allocation, strict=True)
        ]
        content_sum = sum(section.tokens for section in sections)
        residual = figure.value - content_sum if figure.source != "estimated" else 0
        autocompact = setup.autocompact_at if profile.autocompact == "agent" else None
        buffer = max(budget - autocompact, 0) if autocompact is not None else None
        if autocompact is not None:
            sections.append(
                Section(
                    "autocompact_buffer",
                    "kept free for auto-compaction",
                    buffer or 0,
                    buffer or 0,
                    round((buffer or 0) / setup.window, 4) if setup.window else 0.0,
                    "inferred",
                )
            )
        free = max(budget - (buffer or 0) - figure.value, 0)
        sections.append(
            Section(
                "free",
                "free space",
                free,
                free,
                round(free / setup.window, 4) if setup.window else 0.0,
                "estimated"
                if figure.source == "estimated"
                else "calibrated"
                if figure.estimated
                else "reported",
            )
        )

        thresholds = Thresholds(
            window=setup.window,
            window_source=setup.window_source,
            budget=budget,
            output_reserve=reserve,
            autocompact_at=autocompact,
            autocompact_buffer=buffer,
            editing_at=int(setup.window * setup.triggers.editing),
            compaction_at=int(setup.window * setup.triggers.compaction),
            editing_fraction=setup.triggers.editing,
            compaction_fraction=setup.triggers.compaction,
        )
        shapes = self._shapes.shapes(state, setup, on_context, context, cumulative, system)
        cache = self._simulator_for(setup).run(shapes, self._shared_evidence(related))
        every, recent = self._history(state)
        points = [
            RequestPoint(
                item.response.key,
                item.response.usage.input_tokens_total,
                item.response.usage.output_tokens,
                item.before,
                item.answer,
            )
            for item in on_context
        ]
        return Analysis(
            profile=profile.name,
            profile_source=profile.source,
            budget=budget,
            budget_overridden=setup.window_overridden,
            context_tokens=figure.value,
            context_source=figure.source,
            sections=tuple(sections),
            residual_tokens=residual,
            nodes=tuple(nodes),
            pruned=tuple(pruned),
            render=RENDERER if rendered is not None else "sections",
            render_tokens=None if rendered is None else rendered.token_count,
            render_error=None if rendered is None else rendered.error,
            render_elements=() if rendered is None else rendered.elements,
            thresholds=thresholds,
            breakpoints=self._shapes.next_breakpoints(setup, context, cumulative, system),
            cache=cache,
            tools=self._tools.stats(state, context, setup.window, encoding),
            history=tuple(every),
            history_fill=tuple(
                round(size / setup.window, 4) if setup.window else 0.0 for size in every
            ),
            # An agent without auto-compaction (Copilot) prunes once the budget is full.
            forecast=forecast(
                recent,
                figure.value,
                autocompact if autocompact is not None else budget,
                "auto-compaction" if autocompact is not None else "the budget is full",
            ),
            estimate_accuracy=accuracy(points, system, encoding.name),
            relevance=self._relevance.rank(state, context, user_index),
        )

    def _nodes(
        self,
        profile: Profile,
        context: Sequence[Message],
        kinds: Sequence[str],
        tokens: Sequence[int],
        user_index: int | None,
        contents: frozenset[str],
        budget: int,
        system: int,
    ) -> tuple[list[NodeInput], int]:
        """Prunable nodes of the profile's tree, and the tokens of everything else."""
        specs = {spec.content: spec for spec in profile.sections}
        nodes: list[NodeInput] = []
        fixed = system
        rounds: list[list[int]] = []  # history rounds: message indices, each from a user message
        for index, kind in enumerate(kinds):
            name = section_of(kind, index, user_index, contents)
            spec = specs.get(name)
            if spec is None or spec.priority is None:
                fixed += tokens[index]
                continue
            if spec.prioritized_list:
                if not rounds or is_typed_user_message(context[index]):
                    rounds.append([])
                rounds[-1].append(index)
                continue
            size = tokens[index]
            if spec.truncate_results is not None and any(
                block.kind == "tool_result" for block in context[index].blocks
            ):
                size = truncated(size, int(budget * spec.truncate_results.max_fraction))
            nodes.append(
                NodeInput(f"{spec.name}/{context[index].id}", spec.name, size, spec.priority, index)
            )
        history = specs.get("history")
        if history is not None and history.priority is not None:
            count = len(rounds)
            for number, indices in enumerate(rounds):
                # Older rounds rank lower: the newest keeps the list's priority.
                priority = history.priority - (count - 1 - number) * HISTORY_PRIORITY_STEP
                nodes.append(
                    NodeInput(
                        f"history/round-{number + 1}",
                        history.name,
                        sum(tokens[i] for i in indices),
                        priority,
                        indices[0],
                    )
                )
        nodes.sort(key=lambda node: node.order)
        return nodes, fixed

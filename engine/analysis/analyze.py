"""Session state -> analysis snapshot, kept incrementally.

An ``Analyzer`` lives beside one session's reader. Counting is what costs: block token counts are
cached on the blocks (engine/sessions/report.py), JSON audits and relevance terms by tool call,
the cache simulation by request; each call then only walks the context's per-message sums.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from engine.analysis.accuracy import RequestPoint, accuracy
from engine.analysis.cache_sim import Boundary, CacheSimulator, RequestShape
from engine.analysis.forecast import forecast
from engine.analysis.json_audit import compact_json
from engine.analysis.profiles import CacheSpec, Profile
from engine.analysis.relevance import Scorer, TermCache, terms
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
from engine.analysis.snapshot import (
    Analysis,
    Breakpoint,
    LargeResult,
    Relevance,
    Section,
    Thresholds,
    ToolStat,
)
from engine.analysis.tree import NodeInput, lay_out, truncated
from engine.config import Thresholds as Triggers
from engine.models.registry import ModelInfo
from engine.sessions.model import Message, Response, SessionState
from engine.sessions.report import (
    BULK,
    cached,
    context_tokens,
    count_blocks,
    model_info,
)
from engine.tokens.encoding import Encoding

AutocompactRule = Callable[[int], int | None]
SYSTEM_KEY = "system"
LOOKBACK = 20  # earlier prompts a request is checked against (Anthropic looks 20 blocks back)
LARGEST = 3
RECENT_USER_MESSAGES = 3
RECENT_ASSISTANT_MESSAGES = 10
HISTORY_PRIORITY_STEP = 1  # PrioritizedList: each older round one priority lower


@dataclass(frozen=True, slots=True)
class Setup:
    """What the analysis needs besides the session: the profile, the model and the limits."""

    profile: Profile
    model: ModelInfo
    window: int
    window_source: str
    autocompact_at: int | None
    triggers: Triggers
    window_overridden: bool = False

    @property
    def cache(self) -> CacheSpec:
        """The profile's caching as the model's provider applies it: OpenAI and Google cache
        prompt prefixes by themselves (OpenAI in steps of 128 tokens) whatever markers the agent
        sets; Anthropic caches only at the agent's breakpoints."""
        spec = self.profile.cache
        provider = self.model.provider
        if provider == "openai":
            return replace(spec, style="automatic", granularity=128)
        if provider == "google":
            return replace(spec, style="automatic", granularity=1)
        if provider == "anthropic" and spec.style == "automatic":
            return replace(spec, style="breakpoints", breakpoints=("system", "last_message"))
        return spec


@dataclass(slots=True)
class _OnContext:
    """A response whose answer is on the context: where, and the message tokens before it."""

    response: Response
    index: int  # first message of its answer
    before: int  # tokenizer count of the messages before it
    answer: int  # tokenizer count of its answer's messages


class Analyzer:
    """``renderer``: lay the profile's tree out with the prompt renderer (engine/render), for
    its budgets, pruning and reasons; otherwise ctxtop's section allocation and pruning order
    (fast enough for every live update)."""

    def __init__(self, *, renderer: bool = False) -> None:
        self.renderer = renderer
        self._system: int | None = None
        self._json: dict[str, tuple[int, int, bool]] = {}  # call id -> (text length, saving, json)
        self._terms = TermCache()
        self._scorer = Scorer()
        self._simulator: CacheSimulator | None = None
        self._simulator_key: tuple[str, str, CacheSpec] | None = None
        self._shape_memo: dict[str, tuple[tuple[object, ...], RequestShape]] = {}

    # --- counting -------------------------------------------------------------------------

    def _message_tokens(self, context: Sequence[Message], encoding: Encoding) -> list[int]:
        fresh = [b for m in context for b in m.blocks if b.tokens is None]
        if fresh:
            count_blocks(fresh, cached(encoding) if len(fresh) >= BULK else encoding)
        return [sum(block.tokens or 0 for block in message.blocks) for message in context]

    def _on_context(
        self, state: SessionState, context: Sequence[Message], tokens: Sequence[int]
    ) -> list[_OnContext]:
        first: dict[str, int] = {}
        answer: Counter[str] = Counter()
        for index, message in enumerate(context):
            key = message.response_key
            if key is not None:
                first.setdefault(key, index)
                answer[key] += tokens[index]
        found: list[_OnContext] = []
        running = 0
        position = 0
        # A response from before the last compaction may still have its answer on the context
        # (a preserved segment), but its prompt held the history the compaction replaced.
        since = state.compactions[-1].line if state.compactions else 0
        for key, index in sorted(first.items(), key=lambda item: item[1]):
            response = state.responses.get(key)
            if response is None or response.line < since:
                continue
            running += sum(tokens[position:index])
            position = index
            found.append(_OnContext(response, index, running, answer[key]))
        return found

    # --- parts ----------------------------------------------------------------------------

    def _tools(
        self, state: SessionState, context: Sequence[Message], window: int, encoding: Encoding
    ) -> tuple[ToolStat, ...]:
        per_tool: dict[str, list[tuple[str, int]]] = {}
        savings: Counter[str] = Counter()
        json_results: Counter[str] = Counter()
        for message in context:
            for block in message.blocks:
                if block.kind != "tool_result" or not block.tool_call_id:
                    continue
                call = state.tools.get(block.tool_call_id)
                name = call.name if call else (block.tool_name or "unknown")
                per_tool.setdefault(name, []).append((block.tool_call_id, block.tokens or 0))
                saving, is_json = self._json_saving(
                    block.tool_call_id, block.content(), block.tokens or 0, encoding
                )
                savings[name] += saving
                json_results[name] += is_json
        rows = []
        for name, results in per_tool.items():
            total = sum(tokens for _, tokens in results)
            largest = sorted(results, key=lambda item: -item[1])[:LARGEST]
            rows.append(
                ToolStat(
                    name=name,
                    calls=len(results),
                    result_tokens=total,
                    share=round(total / window, 4) if window else 0.0,
                    json_results=json_results[name],
                    json_savings=savings[name],
                    largest=tuple(LargeResult(call_id, tokens) for call_id, tokens in largest),
                )
            )
        return tuple(sorted(rows, key=lambda row: (-row.result_tokens, row.name)))

    def _json_saving(
        self, call_id: str, text: str, tokens: int, encoding: Encoding
    ) -> tuple[int, bool]:
        known = self._json.get(call_id)
        if known is not None and known[0] == len(text):
            return known[1], known[2]
        compact = compact_json(text)
        saving = max(tokens - encoding.count(compact), 0) if compact is not None else 0
        self._json[call_id] = (len(text), saving, compact is not None)
        return saving, compact is not None

    def _relevance(
        self, state: SessionState, context: Sequence[Message], user_index: int | None
    ) -> tuple[Relevance, ...]:
        documents: list[tuple[str, str]] = []
        sizes: dict[str, int] = {}
        end = user_index if user_index is not None else len(context)
        for message in context[:end]:
            for block in message.blocks:
                if block.kind == "tool_result" and block.tool_call_id:
                    documents.append((block.tool_call_id, block.content()))
                    sizes[block.tool_call_id] = block.tokens or 0
        self._terms.update(documents)
        query: Counter[str] = Counter()
        users = 0
        assistants = 0
        for message in reversed(context):
            if users < RECENT_USER_MESSAGES and is_typed_user_message(message):
                users += 1
            elif assistants < RECENT_ASSISTANT_MESSAGES and message.role == "assistant":
                assistants += 1
            else:
                continue
            for block in message.blocks:
                if block.kind == "text":
                    query.update(terms(block.content()))
            if users >= RECENT_USER_MESSAGES and assistants >= RECENT_ASSISTANT_MESSAGES:
                break
        keys = [key for key, _ in documents]
        scored = (
            self._scorer.scores(self._terms, keys, query) if query else dict.fromkeys(keys, 0.0)
        )
        rows = [
            Relevance(
                tool_call_id=key,
                tool=state.tools[key].name if key in state.tools else "unknown",
                tokens=sizes[key],
                score=round(scored[key], 4),
            )
            for key in keys
        ]
        return tuple(sorted(rows, key=lambda row: (row.score, -row.tokens)))

    def _history(self, state: SessionState) -> tuple[list[int], list[int]]:
        """Context size after every request, and those since the last compaction."""
        since = state.compactions[-1].line if state.compactions else 0
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

    def _shapes(
        self,
        state: SessionState,
        setup: Setup,
        on_context: Sequence[_OnContext],
        context: Sequence[Message],
        cumulative: Sequence[int],
        system: int,
    ) -> list[RequestShape]:
        logged = any(
            r.usage.cache_read_tokens or r.usage.cache_write_tokens
            for r in state.responses.values()
        )
        placed = {item.response.key: item for item in on_context}
        rules = setup.cache.breakpoints
        automatic = setup.cache.style == "automatic"
        compaction_lines = sorted(c.line for c in state.compactions)
        summaries = self._summary_requests(state) if setup.cache.summary_request_uncached else set()
        shapes: list[RequestShape] = []
        epoch = 0
        compactions = 0
        new_system = setup.cache.compaction_changes_system
        previous_prompt = 0
        prompt_ends: list[Boundary] = []  # earlier prompts of this epoch, newest last
        for response in state.responses.values():
            usage = response.usage
            prompt = usage.input_tokens_total
            while compaction_lines and compaction_lines[0] < response.line:
                compaction_lines.pop(0)
                epoch, prompt_ends = epoch + 1, []
                compactions += 1
            item = placed.get(response.key)
            if item is None and prompt < previous_prompt:
                # The prompt shrank without a compaction: its history was rewritten.
                epoch, prompt_ends = epoch + 1, []
            previous_prompt = prompt
            if response.key in summaries:
                shapes.append(self._summary_shape(response, logged))
                continue
            if item is not None and item.index > 0:
                end_key = f"m:{context[item.index - 1].id}"
            else:
                end_key = f"r:{epoch}:{response.key}"
            system_key = f"{SYSTEM_KEY}:{compactions}" if new_system else SYSTEM_KEY
            # A request whose inputs did not change keeps its shape object, so that the
            # simulation sees at a glance that it need not run again.
            memo_key = (
                response.line,
                response.timestamp,
                prompt,
                usage.output_tokens,
                usage.input_tokens,
                usage.cache_read_tokens,
                usage.cache_write_tokens,
                logged,
                end_key,
                system,
                system_key,
                None if item is None else (item.index, cumulative[item.index]),
                id(shapes[-1]) if prompt_ends and shapes else None,
            )
            known = self._shape_memo.get(response.key)
            if known is not None and known[0] == memo_key:
                shape = known[1]
            else:
                shape = self._shape(
                    response,
                    logged,
                    item,
                    end_key,
                    (system_key, system),
                    rules,
                    automatic,
                    prompt_ends,
                    context,
                    cumulative,
                )
                self._shape_memo[response.key] = (memo_key, shape)
            shapes.append(shape)
            prompt_ends.append(Boundary(end_key, prompt, False))
        return shapes

    @staticmethod
    def _summary_requests(state: SessionState) -> set[str]:
        """The last response before each compaction: the agent's summarising request."""
        keys: set[str] = set()
        lines = sorted(c.line for c in state.compactions)
        last: Response | None = None
        for response in state.responses.values():
            while lines and lines[0] < response.line:
                if last is not None:
                    keys.add(last.key)
                lines.pop(0)
                last = None
            last = response
        if lines and last is not None:
            keys.add(last.key)
        return keys

    @staticmethod
    def _summary_shape(response: Response, logged: bool) -> RequestShape:
        prompt = response.usage.input_tokens_total
        return _request_shape(response, logged, [Boundary(f"summary:{response.key}", prompt, True)])

    def _shape(
        self,
        response: Response,
        logged: bool,
        item: _OnContext | None,
        end_key: str,
        system_prefix: tuple[str, int],
        rules: Sequence[str],
        automatic: bool,
        prompt_ends: Sequence[Boundary],
        context: Sequence[Message],
        cumulative: Sequence[int],
    ) -> RequestShape:
        prompt = response.usage.input_tokens_total
        system_key, system = system_prefix
        boundaries = [Boundary(system_key, system, automatic or "system" in rules)]
        if item is not None and not automatic:
            boundaries.extend(
                self._message_breakpoints(rules, context, cumulative, item, system, prompt)
            )
        boundaries.extend(prompt_ends[-LOOKBACK:])
        boundaries.append(Boundary(end_key, prompt, True))
        return _request_shape(response, logged, boundaries)

    def _message_breakpoints(
        self,
        rules: Sequence[str],
        context: Sequence[Message],
        cumulative: Sequence[int],
        item: _OnContext,
        system: int,
        prompt: int,
    ) -> list[Boundary]:
        """Copilot-style breakpoints inside the prompt (after user messages, after a round's
        last tool result, after the stable instructions), sized by scaled tokenizer counts."""
        if not any(rule in rules for rule in ("user_messages", "round_results", "stable_prefix")):
            return []
        end = item.index
        scale = (prompt - system) / cumulative[end] if cumulative[end] else 1.0
        found: list[Boundary] = []

        def at(index: int) -> Boundary:
            size = system + round(cumulative[index + 1] * scale)
            return Boundary(f"m:{context[index].id}", size, True)

        if "stable_prefix" in rules:
            stable = 0
            while stable < end and content_kind(context[stable]) == "instructions":
                stable += 1
            if stable:
                found.append(at(stable - 1))
        users = [i for i in range(end) if is_typed_user_message(context[i])]
        if "user_messages" in rules:
            found.extend(at(i) for i in users[-2:])
        if (
            "round_results" in rules
            and end
            and any(b.kind == "tool_result" for b in context[end - 1].blocks)
        ):
            found.append(at(end - 1))
        return found

    def _breakpoints(
        self, setup: Setup, context: Sequence[Message], cumulative: Sequence[int], system: int
    ) -> tuple[Breakpoint, ...]:
        """Where the agent would place its cache markers on the next request."""
        cache = setup.cache
        total = system + cumulative[-1]
        if cache.style == "automatic":
            return (Breakpoint("the longest prompt prefix sent before (automatic)", total),)
        points: list[Breakpoint] = []
        if "system" in cache.breakpoints:
            points.append(Breakpoint("system prompt and tools", system))
        if "stable_prefix" in cache.breakpoints:
            stable = 0
            while stable < len(context) and content_kind(context[stable]) == "instructions":
                stable += 1
            if stable:
                points.append(
                    Breakpoint("instructions (stable prefix)", system + cumulative[stable])
                )
        if "user_messages" in cache.breakpoints:
            users = [i for i, m in enumerate(context) if is_typed_user_message(m)]
            for index in users[-2:]:
                points.append(
                    Breakpoint(f"user message {context[index].id}", system + cumulative[index + 1])
                )
        if (
            "round_results" in cache.breakpoints
            and context
            and any(b.kind == "tool_result" for b in context[-1].blocks)
        ):
            points.append(Breakpoint("last tool result of the round", total))
        if "last_message" in cache.breakpoints and context:
            points.append(Breakpoint("last message", total))
        unique: dict[int, Breakpoint] = {}
        for point in points:
            unique.setdefault(point.protected_tokens, point)
        ordered = sorted(unique.values(), key=lambda point: point.protected_tokens)
        if len(ordered) > cache.max_breakpoints:
            # The agent keeps the outermost markers: the first and the newest ones.
            ordered = ordered[:1] + ordered[-(cache.max_breakpoints - 1) :]
        return tuple(ordered)

    # --- the whole ----------------------------------------------------------------------------

    def analyze(self, state: SessionState, setup: Setup, encoding: Encoding) -> Analysis:
        profile = setup.profile
        context = state.context
        tokens = self._message_tokens(context, encoding)
        cumulative = [0]
        for value in tokens:
            cumulative.append(cumulative[-1] + value)
        on_context = self._on_context(state, context, tokens)
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
        shapes = self._shapes(state, setup, on_context, context, cumulative, system)
        cache = self._simulator_for(setup).run(shapes)
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
            breakpoints=self._breakpoints(setup, context, cumulative, system),
            cache=cache,
            tools=self._tools(state, context, setup.window, encoding),
            history=tuple(every),
            # An agent without auto-compaction (Copilot) prunes once the budget is full.
            forecast=forecast(
                recent,
                figure.value,
                autocompact if autocompact is not None else budget,
                "auto-compaction" if autocompact is not None else "the budget is full",
            ),
            estimate_accuracy=accuracy(points, system, encoding.name),
            relevance=self._relevance(state, context, user_index),
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


def _request_shape(response: Response, logged: bool, boundaries: list[Boundary]) -> RequestShape:
    usage = response.usage
    return RequestShape(
        response_id=response.key,
        line=response.line,
        timestamp=response.timestamp,
        prompt=usage.input_tokens_total,
        output=usage.output_tokens,
        boundaries=tuple(sorted(boundaries, key=lambda b: b.tokens)),
        logged_read=usage.cache_read_tokens if logged else None,
        logged_write=usage.cache_write_tokens if logged else None,
        logged_uncached=usage.input_tokens,
    )


def setup_for(
    state: SessionState,
    adapter_autocompact: AutocompactRule,
    profile: Profile,
    triggers: Triggers,
    window_override: int | None = None,
) -> Setup:
    """The limits of a session as the report states them (``window_override``: what if the
    window were this many tokens?)."""
    info = model_info(state.model)
    if window_override is not None:
        window, source = window_override, "override"
    elif state.context_window is not None:
        window, source = state.context_window, "logged"
    else:
        window, source = info.context_window, "assumed" if info.assumed else "registry"
    return Setup(
        profile=profile,
        model=info,
        window=window,
        window_source=source,
        autocompact_at=adapter_autocompact(window) if window else None,
        triggers=triggers,
        window_overridden=window_override is not None,
    )

"""Each request as the cache simulation sees it: the prefixes of its prompt a cache could hold.

Only the live context's requests are shaped: from the first request on the context or after the
last compaction or rewrite, whichever comes first (``live_start``); the history before it is not
in the window and the simulation takes only its logged figures (cache_history.py). A request on
the context is placed by its messages (its prompt ends before its answer); one that is not (the
context was rewritten after it) only by its reported size, its prefixes being the earlier prompts
of its run. The system prompt and tools come first; the breakpoints are where the profile's rules
put the agent's cache markers.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice

from ctxtop.engine.analysis.cache_sim import (
    PARENT_KEY,
    TOLERANCE,
    Boundary,
    CarriedEntry,
    RequestShape,
)
from ctxtop.engine.analysis.placement import OnContext
from ctxtop.engine.analysis.sections import content_kind, is_typed_user_message
from ctxtop.engine.analysis.setup import Setup
from ctxtop.engine.analysis.snapshot import Breakpoint
from ctxtop.engine.models.registry import ModelInfo, Prices
from ctxtop.engine.models.registry import lookup as model_info
from ctxtop.engine.sessions.cache_clock import write_ttl
from ctxtop.engine.sessions.model import Message, Response, SessionState, Usage

SYSTEM_KEY = "system"
LOOKBACK = 20  # earlier prompts a request is checked against (Anthropic looks 20 blocks back)
# What a tool result costs beyond its text: its call id (``toolu_`` + 24 random characters) and
# the block's wrapper. Two "No files found" results left 55 tokens uncached (1af7fc5e line 22).
RESULT_FRAMING = 20


@dataclass(slots=True)
class _Walk:
    """Where the walk over a session's responses stands: its epoch (a run of requests that may
    read each other's prefixes), the ends of that run's latest prompts, the shapes so far."""

    logged: bool = False  # any response has cache figures
    epoch: int = 0
    compactions: int = 0
    systems: int = 0  # system prompts sent so far besides the first, at a restart
    previous_prompt: int = 0
    prompt_ends: list[Boundary] = field(default_factory=list)  # this epoch's, newest last
    ends_digest: int = 0  # a hash of all of them, for the memo
    after: int = 0  # the line of the last response walked
    first: bool = True  # the walk began at the session's first response
    last: tuple[Response, Usage] | None = None  # that response and its usage then
    shapes: list[RequestShape] = field(default_factory=list)

    def new_epoch(self) -> None:
        self.epoch, self.prompt_ends, self.ends_digest = self.epoch + 1, [], 0

    def copy(self) -> _Walk:
        return replace(self, prompt_ends=list(self.prompt_ends), shapes=list(self.shapes))

    def still_first(self, state: SessionState, count: int) -> bool:
        """Whether the session's first ``count`` responses are still the ones walked (the
        newest of them the same object, with the same usage)."""
        if count == 0 or self.last is None:
            return count == 0
        newest = responses_from(state, count - 1)
        response = newest[0] if newest else None
        held, usage = self.last
        if response is None:
            return False
        if response is held:
            return response.usage is usage
        # An archived response is read as a new object each time (engine/sessions/responses.py).
        return response.key == held.key and response.model == held.model and response.usage == usage


def _lines_since(state: SessionState, after: int) -> list[int]:
    """The sorted lines of the compactions at or after line ``after`` (a walk back from the
    newest: the compactions before are not looked at)."""
    lines = []
    for compaction in reversed(state.compactions):
        if compaction.line < after:
            break
        lines.append(compaction.line)
    return sorted(lines)


def responses_from(state: SessionState, start: int) -> list[Response]:
    """The session's responses from index ``start`` on, taken from the newest back: the work is
    that of the responses returned, not of those before them (the history)."""
    count = len(state.responses) - start
    if count <= 0:
        return []
    found = list(islice(reversed(state.responses.values()), count))
    found.reverse()
    return found


class _EditLines:
    """The sorted lines (each once) of a session's calls to some tools, taken in as calls
    arrive (the session's calls only grow), and the process starts they make new system
    prompts at (``new_system_restarts``), worked out for the new starts only while lines come
    in order. ``version`` changes whenever those starts do."""

    def __init__(self) -> None:
        self._key: tuple[int, Sequence[str]] | None = None
        self._seen = 0  # how far into the state's ``tool_changes`` (only ever appended)
        self._lines: list[int] = []
        self._starts = 0  # process starts worked out
        self._found: list[int] = []
        self.version = 0

    def of(self, state: SessionState, tools: Sequence[str]) -> list[int]:
        if not tools or not state.process_starts:
            return []
        starts = state.process_starts
        changes = state.tool_changes
        if self._key != (id(state), tools) or not changes.base <= self._seen <= changes.end:
            # (changes dropped since the last look: their calls are read from the session)
            self._key, self._seen = (id(state), tools), changes.end
            edits = set(state.tools.archived.lines_of(tools))  # (columns: no call objects)
            edits.update(call.line for call in state.tools.live.values() if call.name in tools)
            self._lines = sorted(edits)
            self._starts, self._found = 0, []
            self.version += 1
        # Past the newest start worked out, a new call changes none of them.
        settled = starts[self._starts - 1] if self._starts else 0
        lines = self._lines
        for call in changes.since(self._seen):
            if call.name in tools:
                at = bisect.bisect_left(lines, call.line)
                if at == len(lines) or lines[at] != call.line:
                    lines.insert(at, call.line)
                    if call.line < settled:
                        self._starts, self._found = 0, []
        self._seen = changes.end
        if len(starts) < self._starts:
            self._starts, self._found = 0, []
        if self._starts < len(starts):
            self._found = self._found + restarts_after_edits(starts, self._lines, self._starts)
            self._starts = len(starts)
            self.version += 1
        return self._found


def live_start(state: SessionState, on_context: Sequence[OnContext]) -> int:
    """How many of the session's responses come before its live context: the first response
    on the context or at or after the last compaction or rewrite, whichever comes first."""
    frozen = state.last_rewrite_line
    if not frozen:
        return 0
    if state.request_lines_ordered:
        bound = min([frozen, *(item.response.line for item in on_context[:1])])
        return bisect.bisect_left(state.request_lines, bound)
    placed = {item.response.key for item in on_context}
    # (keys and lines, not responses: the history's are in columns)
    for index, (key, line) in enumerate(zip(state.responses, state.request_lines, strict=True)):
        if key in placed or line >= frozen:
            return index
    return len(state.responses)


def model_of(model: str | None, setup: Setup) -> ModelInfo:
    """The model that answered (the session's model when the log names none)."""
    return model_info(model) if model else setup.model


def model_prices(model: str | None, setup: Setup) -> Prices | None:
    return model_of(model, setup).prices


class ShapeBuilder:
    def __init__(self) -> None:
        self._restarts = _EditLines()
        # The walk up to the last response that is final (before the last compaction and off
        # the context), with what it was made on and how many responses it took in: a live
        # session's next update walks only what came after it.
        self._checkpoint: tuple[tuple[object, ...], int, _Walk] | None = None
        self._shape_memo: dict[str, tuple[tuple[object, ...], RequestShape]] = {}
        self._first: tuple[tuple[str, int, int], str] | None = None
        # The context's stable instructions (how many lead it) and typed user messages, worked
        # out once per ``shapes`` call rather than once per request (a Copilot session's
        # requests times its messages).
        self._marks: tuple[int, list[int]] | None = None
        # Of the last ``shapes`` call: how many responses came before the live context, and
        # whether the session's log has cache fields.
        self.history = 0
        self.logged = False
        # What the history leaves cached for the live context (see ``_carried``), and whether
        # its log has cache fields, by the terms they were worked out on.
        self.carried: tuple[CarriedEntry, ...] = ()
        self._carried_key: tuple[object, ...] | None = None
        # The conversation sends its parent's first (``SessionState.continues_parent``).
        self._continues = False
        self._history_logged: tuple[tuple[int, int], bool] | None = None

    def _context_marks(self, context: Sequence[Message]) -> tuple[int, list[int]]:
        if self._marks is None:
            stable = 0
            while stable < len(context) and content_kind(context[stable]) == "instructions":
                stable += 1
            users = [i for i, message in enumerate(context) if is_typed_user_message(message)]
            self._marks = (stable, users)
        return self._marks

    def _first_key(self, response: str, messages: Sequence[Message], prompt: int) -> str:
        known = (response, len(messages), prompt)
        if self._first is None or self._first[0] != known:
            self._first = (known, first_prompt_key(messages, prompt))
        return self._first[1]

    def shapes(
        self,
        state: SessionState,
        setup: Setup,
        on_context: Sequence[OnContext],
        context: Sequence[Message],
        cumulative: Sequence[int],
        system: int,
    ) -> list[RequestShape]:
        rules = setup.cache.breakpoints
        automatic = setup.cache.style == "automatic"
        self._continues = state.continues_parent
        restarts = self._restarts.of(state, setup.cache.process_start_new_system_after)
        history = live_start(state, on_context)
        if history != self.history:
            self._shape_memo = {}  # the requests that left the live context are shaped no more
        self.history = history
        key = (id(state), system, rules, automatic, setup.cache, self._restarts.version, history)
        walk, start = self._resume(state, key)
        if start < history:  # a fresh walk: from the live context on
            walk.first, start = False, history
            # The compactions and restarts before the history's last request, counted.
            walk.after = state.request_lines[history - 1]
            walk.compactions = sum(c.line < walk.after for c in state.compactions)
            walk.systems = sum(line < walk.after for line in restarts)
            walk.epoch = walk.compactions + walk.systems
        ahead = responses_from(state, start - 1 if start else 0)
        if start and ahead:
            if walk.last is None:  # the history's last response: the checkpoint's mark
                walk.last = (ahead[0], ahead[0].usage)
            del ahead[0]
        if not walk.logged:
            walk.logged = any(u.cache_read_tokens or u.cache_write_tokens for u in _usages(ahead))
            if not walk.logged and history:
                walk.logged = self._logged_before(state, history)
            if walk.logged and start > history:  # the checkpoint was made on other terms
                self._checkpoint = None
                return self.shapes(state, setup, on_context, context, cumulative, system)
        self.logged = walk.logged
        self._carry(state, setup, history, system, restarts)
        placed = {item.response.key: item for item in on_context}
        compaction_lines = _lines_since(state, walk.after)
        summaries = (
            self._summary_requests(state, start, compaction_lines)
            if setup.cache.summary_request_uncached
            else set()
        )
        frozen_until = state.last_rewrite_line
        restarts = restarts[bisect.bisect_left(restarts, walk.after) :]  # starts come in order
        shapes = walk.shapes
        self._marks = None
        new_system = setup.cache.compaction_changes_system
        final = True  # every response walked so far in this call is final
        for response in ahead:
            item = placed.get(response.key)
            if final and (item is not None or response.line >= frozen_until):
                # The first response not final (on the context, or after the last compaction):
                # the walk up to it is the next call's start. Once per call: a copy holds all
                # the shapes so far.
                final = False
                self._save(key, start, walk)
            start += 1
            usage = response.usage
            prompt = usage.input_tokens_total
            while compaction_lines and compaction_lines[0] < response.line:
                compaction_lines.pop(0)
                walk.new_epoch()
                walk.compactions += 1
            while restarts and restarts[0] < response.line:
                restarts.pop(0)
                walk.new_epoch()
                walk.systems += 1
            if item is None and prompt < walk.previous_prompt:
                # The prompt shrank without a compaction: its history was rewritten.
                walk.new_epoch()
            walk.previous_prompt = prompt
            walk.after, walk.last = response.line, (response, usage)
            if response.key in summaries:
                shapes.append(
                    self._summary_shape(response, walk.logged, model_of(response.model, setup))
                )
                continue
            if walk.first and not shapes and item is not None and item.index > 0:
                end_key = self._first_key(response.key, context[: item.index], prompt)
            elif item is not None and item.index > 0:
                end_key = f"m:{context[item.index - 1].id}"
            else:
                end_key = f"r:{walk.epoch}:{response.key}"
            system_key = f"{SYSTEM_KEY}:{walk.compactions if new_system else 0}:{walk.systems}"
            shape = self._memo_shape(
                response,
                walk,
                item,
                end_key,
                (system_key, system),
                setup,
                context,
                cumulative,
                model_of(response.model, setup),
            )
            shapes.append(shape)
            walk.prompt_ends.append(Boundary(end_key, prompt, False))
            del walk.prompt_ends[:-LOOKBACK]
            walk.ends_digest = hash((walk.ends_digest, end_key, prompt))
        if final:
            self._save(key, start, walk)
        return list(shapes)

    def _logged_before(self, state: SessionState, count: int) -> bool:
        """Whether any of the session's first ``count`` responses has cache figures (worked out
        once per count: those responses are final)."""
        if self._history_logged is None or self._history_logged[0] != (id(state), count):
            found = any(
                u.cache_read_tokens or u.cache_write_tokens
                for u, _ in state.responses.figures(0, count)
            )
            self._history_logged = ((id(state), count), found)
        return self._history_logged[1]

    def _carry(
        self,
        state: SessionState,
        setup: Setup,
        history: int,
        system: int,
        restarts: Sequence[int],
    ) -> None:
        """The prefixes the history leaves in the cache for the live context (``carried``: key,
        tokens, when last used, how long it lives). With automatic caching every request caches
        its system prompt and tools, so the history's last request (not a compaction's summary
        request) leaves them cached for the first live one when that sends the same system
        prompt. With breakpoints every request marks the end of its system prompt and tools
        too, but how far that is the log shows only where a read stopped there (``_shown``);
        the history's other prefixes are the prompts of its run, which the live context does
        not send."""
        cache = setup.cache
        version = self._restarts.version
        # (whether a live response follows the history yet: until one does, nothing is carried)
        followed = history < len(state.responses)
        key = (id(state), history, followed, system, cache, version, setup.model)
        if key == self._carried_key:
            return
        self._carried_key, self.carried = key, ()
        if not history or cache.compaction_changes_system or not followed:
            return
        lines = sorted(c.line for c in state.compactions)
        first = max(history - 8, 0)  # a few requests back: past the summary requests
        recent = responses_from(state, first)[: history + 1 - first]
        live, before = recent[-1], recent[:-1]
        uncached = cache.summary_request_uncached
        summaries = self._summary_requests(state, first, lines) if uncached else set()
        last = next((r for r in reversed(before) if r.key not in summaries), None)
        if last is None:
            return
        model = model_of(last.model, setup)
        if system < model.min_cacheable_tokens:
            return  # (a prefix its model does not cache)
        if bisect.bisect_left(restarts, last.line) != bisect.bisect_left(restarts, live.line):
            return  # a new process with another system prompt came between them
        systems = bisect.bisect_left(restarts, live.line)
        if cache.style == "automatic":
            entry = (f"{SYSTEM_KEY}:0:{systems}", system, last.timestamp, None, model.model)
            self.carried = (entry,)
            return
        if "system" not in cache.breakpoints:
            return
        since = bisect.bisect_left(state.request_lines, restarts[systems - 1]) if systems else 0
        shown = self._shown(state, since, history)
        if shown >= model.min_cacheable_tokens:
            ttl = write_ttl(last.usage)
            self.carried = ((f"{SYSTEM_KEY}:0:{systems}", shown, last.timestamp, ttl, model.model),)

    @staticmethod
    def _shown(state: SessionState, start: int, stop: int) -> int:
        """The system prompt and tools' cached prefix as the responses ``[start, stop)`` showed
        it last (0: never): a read short of what the request before left cached stopped at the
        last marker before the conversation, the end of the system prompt and tools (the
        conversation after it was not found: a compaction rewrote it, or it changed)."""
        shown = 0
        left = 0
        for usage, _ in state.responses.figures(start, stop):
            read = usage.cache_read_tokens
            if 0 < read < (1 - TOLERANCE) * left:
                shown = read
            left = read + usage.cache_write_tokens
        return shown

    def _save(self, key: tuple[object, ...], count: int, walk: _Walk) -> None:
        saved = self._checkpoint
        if count and (saved is None or saved[0] != key or saved[1] != count):
            self._checkpoint = (key, count, walk.copy())

    def _resume(self, state: SessionState, key: tuple[object, ...]) -> tuple[_Walk, int]:
        """The walk at the last checkpoint made on the same terms, and how many responses it
        took in; a fresh walk when there is none or the responses before it changed."""
        saved = self._checkpoint
        if saved is not None and saved[0] == key:
            _, count, walk = saved
            if count <= len(state.responses) and walk.still_first(state, count):
                return walk.copy(), count
        self._checkpoint = None
        return _Walk(), 0

    def _memo_shape(
        self,
        response: Response,
        walk: _Walk,
        item: OnContext | None,
        end_key: str,
        system_prefix: tuple[str, int],
        setup: Setup,
        context: Sequence[Message],
        cumulative: Sequence[int],
        model: ModelInfo,
    ) -> RequestShape:
        """The request's shape; one whose inputs did not change keeps its shape object, so
        that the simulation sees at a glance that it need not run again."""
        usage = response.usage
        rules = setup.cache.breakpoints
        automatic = setup.cache.style == "automatic"
        memo_key = (
            response.line,
            response.timestamp,
            usage.input_tokens_total,
            usage.output_tokens,
            usage.input_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
            usage.cache_write_1h_tokens,
            walk.logged,
            end_key,
            system_prefix,
            None if item is None else (item.index, cumulative[item.index]),
            rules,
            automatic,
            setup.cache.marks_last_arrived_result,
            # The earlier prompts it may read from (their ends), as they are now.
            walk.ends_digest,
            model,
            self._continues,
        )
        known = self._shape_memo.get(response.key)
        if known is not None and known[0] == memo_key:
            return known[1]
        shape = self._shape(
            response,
            walk.logged,
            item,
            end_key,
            system_prefix,
            rules,
            automatic,
            setup.cache.marks_last_arrived_result,
            walk.prompt_ends,
            context,
            cumulative,
            model,
        )
        self._shape_memo[response.key] = (memo_key, shape)
        return shape

    @staticmethod
    def _summary_requests(state: SessionState, start: int, lines: list[int]) -> set[str]:
        """The last response before each compaction (of ``lines``, those after the ``start``
        responses already walked): the agent's summarising request."""
        keys: set[str] = set()
        lines = list(lines)
        last: Response | None = None
        for response in responses_from(state, start):
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
    def _summary_shape(response: Response, logged: bool, model: ModelInfo) -> RequestShape:
        prompt = response.usage.input_tokens_total
        boundaries = [Boundary(f"summary:{response.key}", prompt, True)]
        return _request_shape(response, logged, boundaries, model=model)

    def _shape(
        self,
        response: Response,
        logged: bool,
        item: OnContext | None,
        end_key: str,
        system_prefix: tuple[str, int],
        rules: Sequence[str],
        automatic: bool,
        marks_last_arrived: bool,
        prompt_ends: Sequence[Boundary],
        context: Sequence[Message],
        cumulative: Sequence[int],
        model: ModelInfo,
    ) -> RequestShape:
        prompt = response.usage.input_tokens_total
        system_key, system = system_prefix
        boundaries = [Boundary(system_key, system, automatic or "system" in rules)]
        if item is not None and not automatic:
            boundaries.extend(
                self._message_breakpoints(rules, context, cumulative, item, system, prompt)
            )
        boundaries.extend(prompt_ends[-LOOKBACK:])
        if self._continues:
            boundaries.append(Boundary(PARENT_KEY, prompt, False))
        boundaries.append(Boundary(end_key, prompt, True))
        unmarked = 0
        if item is not None and marks_last_arrived and "last_message" in rules:
            after = _after_last_arrived(context, item.index)
            scale = (prompt - system) / cumulative[item.index] if cumulative[item.index] else 1.0
            unmarked = sum(
                round((cumulative[i + 1] - cumulative[i]) * scale) + RESULT_FRAMING for i in after
            )
        sent = context[item.index - 1].timestamp if item is not None and item.index else None
        marked = system_key if boundaries[0].breakpoint and not automatic else None
        return _request_shape(response, logged, boundaries, unmarked, sent, model, marked)

    def _message_breakpoints(
        self,
        rules: Sequence[str],
        context: Sequence[Message],
        cumulative: Sequence[int],
        item: OnContext,
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

        leading, every_user = self._context_marks(context)
        if "stable_prefix" in rules:
            stable = min(leading, end)
            if stable:
                found.append(at(stable - 1))
        if "user_messages" in rules:
            before = bisect.bisect_left(every_user, end)
            found.extend(at(i) for i in every_user[max(before - 2, 0) : before])
        if (
            "round_results" in rules
            and end
            and any(b.kind == "tool_result" for b in context[end - 1].blocks)
        ):
            found.append(at(end - 1))
        return found

    def next_breakpoints(
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


def new_system_restarts(state: SessionState, tools: Sequence[str]) -> list[int]:
    """The process starts (lines) at which the agent sends a system prompt unlike the one before:
    after a process that ran one of ``tools`` (a file edit changes the git status the system
    prompt holds)."""
    if not tools or not state.process_starts:
        return []
    edits = sorted(call.line for call in state.tools.values() if call.name in tools)
    return restarts_after_edits(state.process_starts, edits)


def restarts_after_edits(
    process_starts: Sequence[int], edits: Sequence[int], first: int = 0
) -> list[int]:
    """The process starts with an edit (of the sorted lines ``edits``) since the one before
    (of the starts from index ``first`` on)."""
    found: list[int] = []
    began = process_starts[first - 1] if first else 0
    for start in process_starts[first:]:
        index = bisect.bisect_right(edits, began)
        if index < len(edits) and edits[index] < start:
            found.append(start)
        began = start
    return found


def _usages(responses: Iterable[Response]) -> Iterator[Usage]:
    return (response.usage for response in responses)


def first_prompt_key(messages: Sequence[Message], prompt: int) -> str:
    """The identity of a conversation's first prompt: its messages and its reported size (the
    system prompt and tools, which the log does not hold, are the same when the sizes are).
    Two conversations with one first prompt (Claude Code's "Warmup" sub-agents of one process)
    share its cached prefix."""
    digest = hashlib.sha256()
    for message in messages:
        digest.update(message.role.encode())
        for block in message.blocks:
            digest.update(b"\x00" + block.kind.encode() + b"\x00" + block.content().encode())
        digest.update(b"\x01")
    return f"first:{prompt}:{digest.hexdigest()[:32]}"


def _after_last_arrived(context: Sequence[Message], end: int) -> list[int]:
    """The result messages, before ``end``, of the round's calls made after the call whose
    result arrived last (the log keeps results in arrival order)."""
    first = end
    while first > 0 and _is_results(context[first - 1]):
        first -= 1
    if end - first < 2:
        return []
    start = first
    while start > 0 and context[start - 1].role == "assistant":
        start -= 1
    order = {
        block.tool_call_id: position
        for position, block in enumerate(
            b for message in context[start:first] for b in message.blocks if b.kind == "tool_use"
        )
    }
    last = order.get(context[end - 1].blocks[-1].tool_call_id)
    if last is None:
        return []
    return [
        index
        for index in range(first, end - 1)
        if order.get(context[index].blocks[0].tool_call_id, -1) > last
    ]


def _is_results(message: Message) -> bool:
    return (
        message.role in ("user", "tool")
        and bool(message.blocks)
        and all(block.kind == "tool_result" for block in message.blocks)
    )


def _request_shape(
    response: Response,
    logged: bool,
    boundaries: list[Boundary],
    unmarked: int = 0,
    sent: str | None = None,
    model: ModelInfo | None = None,
    system_key: str | None = None,
) -> RequestShape:
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
        unmarked=unmarked,
        sent=sent,
        model=model,
        write_ttl=write_ttl(usage),
        system_key=system_key,
    )

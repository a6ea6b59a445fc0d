"""Each request as the cache simulation sees it: the prefixes of its prompt a cache could hold.

A request on the context is placed by its messages (its prompt ends before its answer); one that
is no longer on the context (before a compaction or a rewrite) only by its reported size, its
prefixes being the earlier prompts of its run. The system prompt and tools come first; the
breakpoints are where the profile's rules put the agent's cache markers.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Sequence

from engine.analysis.cache_sim import Boundary, RequestShape
from engine.analysis.placement import OnContext
from engine.analysis.sections import content_kind, is_typed_user_message
from engine.analysis.setup import Setup
from engine.analysis.snapshot import Breakpoint
from engine.sessions.model import Message, Response, SessionState

SYSTEM_KEY = "system"
LOOKBACK = 20  # earlier prompts a request is checked against (Anthropic looks 20 blocks back)
# What a tool result costs beyond its text: its call id (``toolu_`` + 24 random characters) and
# the block's wrapper. Two "No files found" results left 55 tokens uncached (1af7fc5e line 22).
RESULT_FRAMING = 20


class ShapeBuilder:
    def __init__(self) -> None:
        self._shape_memo: dict[str, tuple[tuple[object, ...], RequestShape]] = {}
        self._first: tuple[tuple[str, int, int], str] | None = None
        # The context's stable instructions (how many lead it) and typed user messages, worked
        # out once per ``shapes`` call rather than once per request (a Copilot session's
        # requests times its messages).
        self._marks: tuple[int, list[int]] | None = None

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
        self._marks = None
        epoch = 0
        compactions = 0
        new_system = setup.cache.compaction_changes_system
        previous_prompt = 0
        prompt_ends: list[Boundary] = []  # earlier prompts of this epoch, newest last
        ends_digest = 0  # a hash of all of them, for the memo
        restarts = new_system_restarts(state, setup.cache.process_start_new_system_after)
        systems = 0  # system prompts sent so far besides the first, at a restart
        for response in state.responses.values():
            usage = response.usage
            prompt = usage.input_tokens_total
            while compaction_lines and compaction_lines[0] < response.line:
                compaction_lines.pop(0)
                epoch, prompt_ends, ends_digest = epoch + 1, [], 0
                compactions += 1
            while restarts and restarts[0] < response.line:
                restarts.pop(0)
                epoch, prompt_ends, ends_digest = epoch + 1, [], 0
                systems += 1
            item = placed.get(response.key)
            if item is None and prompt < previous_prompt:
                # The prompt shrank without a compaction: its history was rewritten.
                epoch, prompt_ends, ends_digest = epoch + 1, [], 0
            previous_prompt = prompt
            if response.key in summaries:
                shapes.append(self._summary_shape(response, logged))
                continue
            if not shapes and item is not None and item.index > 0:
                end_key = self._first_key(response.key, context[: item.index], prompt)
            elif item is not None and item.index > 0:
                end_key = f"m:{context[item.index - 1].id}"
            else:
                end_key = f"r:{epoch}:{response.key}"
            system_key = f"{SYSTEM_KEY}:{compactions if new_system else 0}:{systems}"
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
                rules,
                automatic,
                setup.cache.marks_last_arrived_result,
                # The earlier prompts it may read from (their ends), as they are now.
                ends_digest,
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
                    setup.cache.marks_last_arrived_result,
                    prompt_ends,
                    context,
                    cumulative,
                )
                self._shape_memo[response.key] = (memo_key, shape)
            shapes.append(shape)
            prompt_ends.append(Boundary(end_key, prompt, False))
            ends_digest = hash((ends_digest, end_key, prompt))
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
        item: OnContext | None,
        end_key: str,
        system_prefix: tuple[str, int],
        rules: Sequence[str],
        automatic: bool,
        marks_last_arrived: bool,
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
        unmarked = 0
        if item is not None and marks_last_arrived and "last_message" in rules:
            after = _after_last_arrived(context, item.index)
            scale = (prompt - system) / cumulative[item.index] if cumulative[item.index] else 1.0
            unmarked = sum(
                round((cumulative[i + 1] - cumulative[i]) * scale) + RESULT_FRAMING for i in after
            )
        sent = context[item.index - 1].timestamp if item is not None and item.index else None
        return _request_shape(response, logged, boundaries, unmarked, sent)

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
    found: list[int] = []
    began = 0
    for start in state.process_starts:
        index = bisect.bisect_right(edits, began)
        if index < len(edits) and edits[index] < start:
            found.append(start)
        began = start
    return found


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
    )

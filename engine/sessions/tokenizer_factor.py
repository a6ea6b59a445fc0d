"""How many tokens the API counts per token of ctxtop's tokenizer, learnt from one session.

ctxtop counts with an offline encoding (o200k_base for Claude); the API's own tokenizer counts the
same text differently (Claude: 5-40 % more), and the prompt carries things the log does not
(framing, reminders the agent adds, thinking kept between tool calls). The factor is learnt from
the growth of the context over its last requests: what the API reported it grew by, over what
the tokenizer counts in the messages added in between. One ratio over the whole
span, not a running average of per-request ratios: a request that adds a few tokens would swing
such an average (a 10-token estimate reported as 300 tokens counted as 30x).

When the log records the system prompt and tools (Claude Code 2.1.330+), the whole prompt of a
request is counted, not only its growth: the starting guess is then the newest request's reported
prompt over its counted prompt, so that a context of a few requests (after a compaction) is
corrected too; and the system prompt gets a factor of its own, what the oldest request of the span
leaves for it once its messages are corrected. Prose, JSON tool schemas and a number-heavy
file differ in their ratio (on Claude Code's loopback logs: 1.04 for the system prompt and tools,
0.63 for a file of numbers): one ratio for both would shift tokens between the sections.

Each tool call also adds tokens to the prompt that the log's text does not hold (the API's framing
of a call and its result: 67-148 tokens per call on real Claude Code 2.1.38/39 logs, 39-105 on
1.0.x; bench/call_framing.py). Where the span's requests tell them apart, the growth is learnt as
``content * counted + per_call * calls``, their sum over the span equal to the one ratio's: a
request after a few small calls grows by more than their text says, one after a large file by
less. A sub-agent, which has nothing to learn from before its second request, starts from its
parent's content factor and per-call tokens and keeps the per-call tokens until it has
``FIT_FROM`` growths of its own; a context with its own growths predicts with its one ratio (on
the real sessions of bench/calibration_accuracy.py its own per-call fit predicted no better).

Every figure that turns tokenizer counts into context tokens (the gauge, the sections, the prompt
tree, edit and compaction previews) takes this factor, so that they add up to what the API
reported.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ctxtop.engine.sessions.ledger import Ledger
from ctxtop.engine.sessions.model import Message, SessionState
from ctxtop.engine.sessions.prompt_parts import logged_tokens
from ctxtop.engine.tokens.encoding import Encoding

# The weight (tokenizer tokens) of the starting guess (1, or a whole prompt's ratio): a context
# that grew by a few thousand tokens says little about the ratio (the reminders and framing the
# agent adds to a request weigh more in it than the content), one that grew by 50,000 says a lot.
PRIOR_WEIGHT = 5000
# How much growth (tokenizer tokens) the factor is learnt over: the newest requests', so that a
# quick look at a file's last megabytes (the status line, ``ctxtop sessions``) learns what a
# whole read learns.
LEARNT_OVER = 100_000
# A ratio outside these says the span holds something else than more of the same content (a
# rewrite the log did not mark): not a tokenizer difference.
LOWEST, HIGHEST = 0.5, 3.0
# The per-call tokens are fitted from this many growths or more (fewer: no term), and kept
# only within these bounds (outside: the calls and the content do not tell apart).
FIT_FROM = 4
PER_CALL_MOST = 400.0


@dataclass(frozen=True, slots=True)
class TokenizerFactor:
    """API tokens per tokenizer token, and the evidence: ``reported`` tokens over ``counted``
    tokenizer tokens (0 and 0: nothing learnt, the factor is 1). ``system``: the factor of a
    system prompt and tools counted from the log (None: ``value``). ``per_call``: the tokens
    each tool call adds beyond its text, ``content``: the factor of the text beside them (None:
    ``value``); over the span learnt from, both give what ``value`` gives. ``call_fit``: the
    content factor and per-call tokens this context's growth tells apart, what its sub-agents
    start from (None: not told apart)."""

    value: float = 1.0
    reported: int = 0
    counted: int = 0
    system: float | None = None
    per_call: float = 0.0
    content: float | None = None
    call_fit: tuple[float, float] | None = None

    @property
    def learned(self) -> bool:
        return self.counted > 0

    def apply(self, tokens: int) -> int:
        return round(tokens * self.value)

    def apply_system(self, tokens: int) -> int:
        """A logged system prompt and tools counted by the tokenizer, in the API's tokens."""
        return round(tokens * (self.value if self.system is None else self.system))

    def grown(self, tokens: int, calls: int) -> int:
        """What messages of ``tokens`` tokenizer tokens holding ``calls`` tool calls add to
        the prompt, in the API's tokens (the growth of a context between two requests)."""
        if self.content is None:
            return self.apply(tokens)
        return round(tokens * self.content + calls * self.per_call)

    def spread(self, tokens: Sequence[int]) -> list[int]:
        """Each count times the factor, rounded so that every prefix sums to its own total
        times the factor (no drift over thousands of messages)."""
        out: list[int] = []
        running = shown = 0
        for value in tokens:
            running += value
            total = round(running * self.value)
            out.append(total - shown)
            shown = total
        return out


NONE = TokenizerFactor()


def factor_from(
    reported_growth: int, counted_growth: int, guess: TokenizerFactor = NONE
) -> TokenizerFactor:
    """The factor from a context's growth between two requests: reported by the API and
    counted by the tokenizer in the messages added in between, starting from ``guess`` (a
    whole prompt's ratio, else 1)."""
    if not _plausible(reported_growth, counted_growth):
        return guess
    value = (reported_growth + PRIOR_WEIGHT * guess.value) / (counted_growth + PRIOR_WEIGHT)
    return TokenizerFactor(value, reported_growth + guess.reported, counted_growth + guess.counted)


def _plausible(reported: int, counted: int) -> bool:
    return counted > 0 and reported > 0 and LOWEST <= reported / counted <= HIGHEST


def last_answer_index(context: Sequence[Message], key: str) -> int | None:
    """Where the answer of the response ``key``, the newest on the context, starts (None: not
    on it). One answer logged in several records can have the results of its tool calls
    between them; another response's message ends the search."""
    found = None
    for index in range(len(context) - 1, -1, -1):
        owner = context[index].response_key
        if owner == key:
            found = index
        elif owner is not None and found is not None:
            break
    return found


def tool_calls(messages: Sequence[Message]) -> int:
    """The tool calls ``messages`` answer (each call and its result add their framing to the
    prompt): their results, so that a call whose result is not logged yet adds nothing."""
    return sum(block.kind == "tool_result" for message in messages for block in message.blocks)


def learn(
    state: SessionState,
    ledger: Ledger,
    encoding: Encoding,
    parent: TokenizerFactor | None = None,
    *,
    fit_calls: bool = True,
) -> TokenizerFactor:
    """The factor of ``state``'s current context, from its newest requests since the last
    compaction or truncation. Until a request follows that rewrite, the factor of the context
    before it (as the system prompt's size is inferred from it, engine/analysis/analyze.py).
    ``parent``: a sub-agent's parent's factor, its starting guess until its own requests
    teach it (None: the one its own file's state holds, if any). ``fit_calls``: also tell the
    calls from the content (``call_fit``), for sub-agents to start from; without it the factor's
    figures are the same, and no tool call is counted."""
    system = logged_tokens(state.prompt_parts, encoding)
    parent = parent or state.parent_factor
    prior = NONE if parent is None else inherited(parent)
    fit = fit_calls or prior.content is not None
    now = _learn(
        state, state.context, state.last_rewrite_line, ledger, encoding, system, prior, fit
    )
    kept = state.context_before_rewrite
    if now is None and kept is not None:
        now = _learn(state, kept[0], kept[1], ledger, encoding, system, prior, fit)
    return now if now is not None and now.learned else prior


def inherited(parent: TokenizerFactor) -> TokenizerFactor:
    """A parent's factor as a sub-agent's starting guess: its content factor and per-call
    tokens (another system prompt: not its system factor)."""
    if parent.call_fit is None:
        return TokenizerFactor(parent.value, parent.reported, parent.counted)
    content, per_call = parent.call_fit
    return TokenizerFactor(parent.value, parent.reported, parent.counted, None, per_call, content)


def _learn(
    state: SessionState,
    context: Sequence[Message],
    since: int,
    ledger: Ledger,
    encoding: Encoding,
    system: int | None,
    prior: TokenizerFactor = NONE,
    fit: bool = True,
) -> TokenizerFactor | None:
    """The factor over ``context``'s newest requests (those logged from line ``since``), back
    until it grew by ``LEARNT_OVER`` tokenizer tokens; None: no request on it. ``system``: the
    system prompt and tools counted from the log (None: not logged); ``prior``: a parent's
    factor, what a sub-agent starts from until it has ``FIT_FROM`` growths of its own."""
    responses = state.responses
    # Where each answer on the context starts, newest first. One answer's records are
    # together (but for its tool results between them).
    starts: dict[str, int] = {}
    model = None
    for index in range(len(context) - 1, -1, -1):
        key = context[index].response_key
        response = None if key is None else responses.get(key)
        if response is None:
            continue
        if response.line < since:
            break
        if not starts:
            model = response.model
        elif response.model != model:
            break  # another model's tokenizer (engine/analysis/placement.py newest_run_start)
        starts[response.key] = index
    if not starts:
        return None
    newest_key, first = next(iter(starts.items()))
    first_key, counted, calls = newest_key, 0, 0
    growths: list[Growth] = []
    for key, index in starts.items():
        if index >= first:
            continue
        added = context[index:first]
        tokens = ledger.messages(added, encoding)
        made = 0
        if fit:
            made = tool_calls(added)
            grew = responses[first_key].usage.input_tokens_total
            grew -= responses[key].usage.input_tokens_total
            if _plausible(grew, tokens):
                growths.append((grew, tokens, made))
        counted += tokens
        calls += made
        first_key, first = key, index
        if counted >= LEARNT_OVER:
            break
    oldest = responses[first_key].usage.input_tokens_total
    newest = responses[newest_key].usage.input_tokens_total
    if not system and prior.content is not None and len(growths) < FIT_FROM:
        return _from_parent(newest - oldest, counted, calls, prior)
    if not system:
        return _with_calls(factor_from(newest - oldest, counted), growths, counted, calls)
    # The log holds the whole prompt: the system prompt gets its factor from the context's first
    # request (of this model); the messages' starting guess is what the newest request leaves
    # for them, learnt further from the growth.
    start_key, start = next(reversed(starts.items()))
    before = ledger.messages(context[:start], encoding)
    share = _system_share(responses[start_key].usage.input_tokens_total, system, before)
    messages = ledger.messages(context[:first], encoding)
    guess = _ratio(newest - round(share * system), messages + counted)
    factor = _with_calls(factor_from(newest - oldest, counted, guess), growths, counted, calls)
    return dataclasses.replace(factor, system=share) if factor.learned else factor


Growth = tuple[int, int, int]  # reported, counted, tool calls: a context's growth


def _with_calls(
    factor: TokenizerFactor, growths: Sequence[Growth], counted: int, calls: int
) -> TokenizerFactor:
    """``factor`` with the content factor and per-call tokens its ``growths`` tell apart, for
    its sub-agents to start from: the per-call tokens fitted, the content factor what the span's
    growth (``counted`` tokens, ``calls`` calls) leaves for the text. A context's own
    predictions keep its one ratio: on the real sessions of bench/calibration_accuracy.py its
    own per-call fit predicts no better."""
    if not factor.learned or not counted or len(growths) < FIT_FROM:
        return factor
    per_call = _fit_per_call(growths)
    if per_call is None:
        return factor
    content = factor.value - per_call * calls / counted
    if not LOWEST <= content <= HIGHEST:
        return factor
    return dataclasses.replace(factor, call_fit=(content, per_call))


def _from_parent(
    reported: int, counted: int, calls: int, parent: TokenizerFactor
) -> TokenizerFactor:
    """A sub-agent's factor from its first growths (``reported`` over ``counted`` tokens with
    ``calls`` calls), starting from its ``parent``'s content factor and keeping its per-call
    tokens: a growth of one large result says little about the ratio of the next."""
    assert parent.content is not None
    if not _plausible(reported, counted):
        return parent
    per_call = parent.per_call
    text = reported - per_call * calls
    content = (text + PRIOR_WEIGHT * parent.content) / (counted + PRIOR_WEIGHT)
    value = content + per_call * calls / counted
    return TokenizerFactor(
        value, reported + parent.reported, counted + parent.counted, None, per_call, content
    )


def call_fit(growths: Sequence[Growth]) -> tuple[float, float] | None:
    """``content`` and ``per_call`` of ``reported = content * counted + per_call * calls``, by
    least squares weighted by 1/sqrt of each growth (None: the calls do not vary)."""
    a = b = c = d = e = 0.0
    for reported, counted, calls in growths:
        weight = 1 / math.sqrt(reported)
        x, y, z = counted * weight, calls * weight, reported * weight
        a, b, c, d, e = a + x * x, b + x * y, c + y * y, d + x * z, e + y * z
    det = a * c - b * b
    if abs(det) < 1e-9 * max(a * c, 1):
        return None
    return (d * c - b * e) / det, (a * e - b * d) / det


def _fit_per_call(growths: Sequence[Growth]) -> float | None:
    """The per-call tokens ``call_fit`` finds, within bounds (None: not told apart)."""
    fitted = call_fit(growths)
    if fitted is None:
        return None
    per_call = fitted[1]
    return per_call if 0 <= per_call <= PER_CALL_MOST else None


def _system_share(prompt: int, system: int, messages: int) -> float:
    """The system prompt's factor from a request of ``prompt`` tokens that sent it (``system``
    tokenizer tokens) and ``messages``: the request's own ratio, its messages being few and of
    the same kind (the user's prompt, the agent's reminders; the context's factor would be that
    of what came later, a file of numbers). When its messages outweigh the system prompt (after
    a compaction: its summary and what it kept) they would set the ratio: the system prompt is
    then the text the log holds, as the tokenizer counts it."""
    if messages > system:
        return 1.0
    share = _ratio(prompt, system + messages)
    return share.value if share.learned else 1.0


def _ratio(reported: int, counted: int) -> TokenizerFactor:
    if not _plausible(reported, counted):
        return NONE
    return TokenizerFactor(reported / counted, reported, counted)

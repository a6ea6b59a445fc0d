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

Every figure that turns tokenizer counts into context tokens (the gauge, the sections, the prompt
tree, edit and compaction previews) takes this factor, so that they add up to what the API
reported.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from engine.sessions.ledger import Ledger
from engine.sessions.model import Message, SessionState
from engine.sessions.prompt_parts import logged_tokens
from engine.tokens.encoding import Encoding

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


@dataclass(frozen=True, slots=True)
class TokenizerFactor:
    """API tokens per tokenizer token, and the evidence: ``reported`` tokens over ``counted``
    tokenizer tokens (0 and 0: nothing learnt, the factor is 1). ``system``: the factor of a
    system prompt and tools counted from the log (None: ``value``)."""

    value: float = 1.0
    reported: int = 0
    counted: int = 0
    system: float | None = None

    @property
    def learned(self) -> bool:
        return self.counted > 0

    def apply(self, tokens: int) -> int:
        return round(tokens * self.value)

    def apply_system(self, tokens: int) -> int:
        """A logged system prompt and tools counted by the tokenizer, in the API's tokens."""
        return round(tokens * (self.value if self.system is None else self.system))

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


def learn(state: SessionState, ledger: Ledger, encoding: Encoding) -> TokenizerFactor:
    """The factor of ``state``'s current context, from its newest requests since the last
    compaction or truncation. Until a request follows that rewrite, the factor of the context
    before it (as the system prompt's size is inferred from it, engine/analysis/analyze.py)."""
    system = logged_tokens(state.prompt_parts, encoding)
    now = _learn(state, state.context, state.last_rewrite_line, ledger, encoding, system)
    kept = state.context_before_rewrite
    if now is not None or kept is None:
        return now or NONE
    return _learn(state, kept[0], kept[1], ledger, encoding, system) or NONE


def _learn(
    state: SessionState,
    context: Sequence[Message],
    since: int,
    ledger: Ledger,
    encoding: Encoding,
    system: int | None,
) -> TokenizerFactor | None:
    """The factor over ``context``'s newest requests (those logged from line ``since``), back
    until it grew by ``LEARNT_OVER`` tokenizer tokens; None: no request on it. ``system``: the
    system prompt and tools counted from the log (None: not logged)."""
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
    first_key, counted = newest_key, 0
    for key, index in starts.items():
        if index >= first:
            continue
        counted += ledger.messages(context[index:first], encoding)
        first_key, first = key, index
        if counted >= LEARNT_OVER:
            break
    oldest = responses[first_key].usage.input_tokens_total
    newest = responses[newest_key].usage.input_tokens_total
    if not system:
        return factor_from(newest - oldest, counted)
    # The log holds the whole prompt: the system prompt gets its factor from the context's first
    # request (of this model); the messages' starting guess is what the newest request leaves
    # for them, learnt further from the growth.
    start_key, start = next(reversed(starts.items()))
    before = ledger.messages(context[:start], encoding)
    share = _system_share(responses[start_key].usage.input_tokens_total, system, before)
    messages = ledger.messages(context[:first], encoding)
    guess = _ratio(newest - round(share * system), messages + counted)
    factor = factor_from(newest - oldest, counted, guess)
    return dataclasses.replace(factor, system=share) if factor.learned else factor


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

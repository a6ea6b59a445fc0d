"""How many tokens the API counts per token of ctxtop's tokenizer, learnt from one session.

ctxtop counts with an offline encoding (o200k_base for Claude); the API's own tokenizer counts the
same text differently (Claude: 5-40 % more), and the prompt carries things the log does not
(framing, reminders the agent adds, thinking kept between tool calls). The factor is learnt from
the growth of the context over its last requests: what the API reported it grew by, over what
the tokenizer counts in the messages added in between. One ratio over the whole
span, not a running average of per-request ratios: a request that adds a few tokens would swing
such an average (a 10-token estimate reported as 300 tokens counted as 30x).

Every figure that turns tokenizer counts into context tokens (the gauge, the sections, the prompt
tree, edit and compaction previews) takes this factor, so that they add up to what the API
reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.sessions.ledger import Ledger
from engine.sessions.model import Message, SessionState
from engine.tokens.encoding import Encoding

# The weight (tokenizer tokens) of the starting guess, a factor of 1: a context that grew by a few
# thousand tokens says little about the ratio (the reminders and framing the agent adds to a
# request weigh more in it than the content), one that grew by 50,000 says a lot.
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
    """API tokens per tokenizer token, and the evidence: ``reported`` tokens of growth over
    ``counted`` tokenizer tokens (0 and 0: nothing learnt, the factor is 1)."""

    value: float = 1.0
    reported: int = 0
    counted: int = 0

    @property
    def learned(self) -> bool:
        return self.counted > 0

    def apply(self, tokens: int) -> int:
        return round(tokens * self.value)

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


def factor_from(reported_growth: int, counted_growth: int) -> TokenizerFactor:
    """The factor from a context's growth between two requests: reported by the API and
    counted by the tokenizer in the messages added in between."""
    if counted_growth <= 0 or reported_growth <= 0:
        return NONE
    if not LOWEST <= reported_growth / counted_growth <= HIGHEST:
        return NONE
    value = (reported_growth + PRIOR_WEIGHT) / (counted_growth + PRIOR_WEIGHT)
    return TokenizerFactor(value, reported_growth, counted_growth)


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
    now = _learn(state, state.context, state.last_rewrite_line, ledger, encoding)
    kept = state.context_before_rewrite
    if now is not None or kept is None:
        return now or NONE
    return _learn(state, kept[0], kept[1], ledger, encoding) or NONE


def _learn(
    state: SessionState,
    context: Sequence[Message],
    since: int,
    ledger: Ledger,
    encoding: Encoding,
) -> TokenizerFactor | None:
    """The factor over ``context``'s newest requests (those logged from line ``since``), back
    until it grew by ``LEARNT_OVER`` tokenizer tokens; None: no request on it."""
    responses = state.responses
    # Where each answer on the context starts, newest first. One answer's records are
    # together (but for its tool results between them).
    starts: dict[str, int] = {}
    for index in range(len(context) - 1, -1, -1):
        key = context[index].response_key
        response = None if key is None else responses.get(key)
        if response is None:
            continue
        if response.line < since:
            break
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
    newest = responses[newest_key].usage.input_tokens_total
    return factor_from(newest - responses[first_key].usage.input_tokens_total, counted)

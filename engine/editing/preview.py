"""Preview of an edit: tokens per section before and after, the changed results, cache cost.

The cache cost: every token after the first edited block must be written to the prompt cache
again on the next request (instead of read from it). It is priced with the model registry; the
break-even is the number of later requests whose cheaper cache reads pay for that rewrite.
"""

from __future__ import annotations

import math
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from ctxtop.engine.models.registry import PER_MILLION, Prices

# The whole context as a caller already shows it (the dashboard's gauge): tokens, provenance.
from ctxtop.engine.models.registry import lookup as model_info

# The whole context as a caller already shows it (the dashboard's gauge): tokens, provenance.
from ctxtop.engine.sessions.cache_clock import writes_for_an_hour
from ctxtop.engine.sessions.ledger import Ledger, encoding_for
from ctxtop.engine.sessions.model import SessionState
from ctxtop.engine.sessions.sample import context_tokens
from ctxtop.engine.sessions.tokenizer_factor import NONE, TokenizerFactor, learn
from ctxtop.engine.words import plural

# The whole context as a caller already shows it (the dashboard's gauge): tokens, provenance.
ShownContext = tuple[int, str]


@dataclass(slots=True)
class CacheCost:
    rewrite_tokens: int
    rewrite_cost_usd: float | None  # extra cost of the rewrite (write price - read price)
    saving_per_request_usd: float | None
    break_even_requests: int | None
    priced_by: str | None  # the model the prices came from

    def figures(self) -> dict[str, Any]:
        """The figures as ``edit --json`` and ``compact --json`` name them."""
        return {
            "cache_rewrite_tokens": self.rewrite_tokens,
            "cache_rewrite_cost_usd": self.rewrite_cost_usd,
            "saving_per_request_usd": self.saving_per_request_usd,
            "break_even_requests": self.break_even_requests,
            "priced_by": self.priced_by,
        }


def pays_off_after(requests: int) -> str:
    """``pays off after 1 request``, ``after 12 requests``."""
    return f"pays off after {plural(requests, 'request')}"


def sections(
    state: SessionState, ledger: Ledger | None = None, factor: TokenizerFactor | None = None
) -> tuple[dict[str, int], int]:
    """The context by section, and the total: tokenizer counts times ``factor`` (None: the
    one ``state``'s requests teach; a fork is counted with its session's). ``ledger``: counts
    kept for the next question about the same state."""
    ledger = ledger or Ledger()
    encoding = encoding_for(state)
    if factor is None:
        factor = learn(state, ledger, encoding, fit_calls=False)
    categories = ledger.categories(state, encoding)
    tokens = factor.spread([entry.tokens for entry in categories])
    by_name = {entry.name: count for entry, count in zip(categories, tokens, strict=True)}
    return by_name, sum(by_name.values())


@dataclass(frozen=True, slots=True)
class WholeContext:
    """The whole context before and after a fork (system prompt, tools and all), as the gauge
    counts it; ``outside_log``: what the log does not show (system prompt, tool definitions,
    framing), the same in the fork."""

    before: int
    after: int
    source: str  # the provenance of ``before``: reported, calibrated, estimated, compaction
    outside_log: int

    def figures(self) -> dict[str, Any]:
        """The figures as ``edit --json`` and ``compact --json`` name them."""
        return {
            "context_before": self.before,
            "context_after": self.after,
            "context_source": self.source,
            "context_outside_log": self.outside_log,
        }


def whole_context(
    state: SessionState | None,
    estimate: int,
    saving: int,
    shown: ShownContext | None = None,
    ledger: Ledger | None = None,
) -> WholeContext:
    """The whole context before and after: ``estimate`` counts only what the log holds (the
    forks' ``tokens_before``); the after is the before less the ``saving``. ``shown``: the
    caller's figure for the same bytes (the dashboard's gauge, which also knows the system
    prompt after a compaction); ``ledger``: the state's counts."""
    if shown is not None:
        value, source = shown
    elif state is not None:
        figure = context_tokens(state, ledger)
        value, source = figure.value, figure.source
    else:
        value, source = estimate, "estimated"
    return WholeContext(value, max(value - saving, 0), source, max(value - estimate, 0))


def rewrite_tokens(
    state: SessionState,
    results: AbstractSet[str],
    inputs: AbstractSet[str] = frozenset(),
    ledger: Ledger | None = None,
    factor: TokenizerFactor = NONE,
) -> int:
    """Tokens of the edited context from the first changed block (a result, or a call whose
    input was cleared) to the end: tokenizer counts times ``factor``."""
    blocks = [block for message in state.context for block in message.blocks]
    for index, block in enumerate(blocks):
        if (block.kind == "tool_result" and block.tool_call_id in results) or (
            block.kind == "tool_use" and block.tool_call_id in inputs
        ):
            counted = sum((ledger or Ledger()).count(blocks[index:], encoding_for(state)))
            return factor.apply(counted)
    return 0


def _prices(model: str | None) -> Prices | None:
    prices = model_info(model).prices
    return prices if isinstance(prices, Prices) else None


def cache_cost(
    after: SessionState,
    changed_ids: set[str],
    saved: int,
    inputs: AbstractSet[str] = frozenset(),
    ledger: Ledger | None = None,
    factor: TokenizerFactor = NONE,
) -> CacheCost:
    if not changed_ids:
        return CacheCost(0, None, None, None, None)
    rewrite = rewrite_tokens(after, changed_ids, inputs, ledger, factor)
    return priced_rewrite(after.model, rewrite, saved, writes_for_an_hour(after))


def priced_rewrite(
    model: str | None, rewrite: int, saved: int, one_hour: bool = False
) -> CacheCost:
    """``rewrite`` tokens written to the cache again once (``one_hour``: at the 1-hour write
    price, as the session's log shows its writes), each later request reading ``saved``
    fewer, priced with the model registry (no prices: only the token figure)."""
    prices = _prices(model)
    if prices is None:
        return CacheCost(rewrite, None, None, None, None)
    write = prices.cache_write_1h if one_hour else prices.cache_write_5m
    extra = rewrite * (write - prices.cache_read) / PER_MILLION
    saving = saved * prices.cache_read / PER_MILLION
    break_even = math.ceil(extra / saving) if saving > 0 else None
    return CacheCost(rewrite, extra, saving, break_even, model)


def diff_lines(before: str, after: str, width: int = 100) -> list[str]:
    """A short diff of one result: its first lines removed, the replacement added."""
    lines = before.splitlines() or [""]
    shown = [f"- {line[:width]}" for line in lines[:3]]
    if len(lines) > 3:
        shown.append(f"- … ({len(lines) - 3} more lines)")
    shown.append(f"+ {after[:width]}")
    return shown


@dataclass(frozen=True, slots=True)
class SectionChange:
    """One section of the context, its tokens before and after a fork."""

    section: str
    tokens_before: int
    tokens_after: int

    def as_json(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
        }


def section_table(before: dict[str, int], after: dict[str, int]) -> tuple[SectionChange, ...]:
    names = list(before) + [name for name in after if name not in before]
    return tuple(SectionChange(name, before.get(name, 0), after.get(name, 0)) for name in names)

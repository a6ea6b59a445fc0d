"""The requests before the live context, for the cache simulation: their logged figures only.

History before the last compaction (or rewrite) is not in the context: none of its requests is
simulated again. What the simulation and its summary need of them comes from what the log
reported, taken in once per request as responses leave the live context (``HistoryLog``): their
cache read, write and uncached input (all input uncached when the log has no cache fields), their
costs at the prices of the model that answered each, and the framing tails and rule votes the
simulation learns from the log (see cache_sim.py). A ``HistorySeed`` holds them.
"""

from __future__ import annotations

from collections.abc import Callable

from ctxtop.engine.analysis.cache_sim import CarriedEntry, HistorySeed, Totals, price, rule_vote
from ctxtop.engine.models.registry import Prices
from ctxtop.engine.sessions.model import SessionState, Usage

PricesOf = Callable[[str | None], Prices | None]  # a response's model -> its prices
# The newest tails the history hands on: the framing of the requests just before the live
# context, and a seed whose copies (one per update) do not grow with the history.
TAILS_KEPT = 1024


class HistoryLog:
    """The history's seed for one session, extended as responses leave the live context (a
    live session takes each response in once); taken in again only when a response already
    taken in was revised or the terms changed."""

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        self._count = 0  # responses taken in
        self._place = 0  # how far into the state's request changes they were checked
        self._prices: dict[str | None, Prices | None] = {}  # by model
        # The terms the prices of responses naming no model were taken on, and how many.
        self._terms: tuple[object, ...] | None = None
        self._unnamed = 0
        self._totals = Totals()
        self._tails: list[int] = []
        self._votes = (0, 0)
        self._last: tuple[int, int] | None = None
        self._seed: HistorySeed | None = None

    def seed(
        self,
        state: SessionState,
        count: int,
        *,
        logged: bool,
        prices_of: PricesOf,
        terms: tuple[object, ...],
        entries: tuple[CarriedEntry, ...] = (),
    ) -> HistorySeed | None:
        """The seed of the session's first ``count`` responses (None when there are none);
        ``logged``: whether the session's log has cache fields at all; ``prices_of``: the
        prices of a response's model; ``terms``: what those depend on besides the model;
        ``entries``: what the responses leave cached (see ``ShapeBuilder.carried``)."""
        if count == 0:
            self._reset(None)
            return None
        key = (id(state), logged)
        changes = state.request_changes
        revised = self._count and any(index < self._count for index in changes[self._place :])
        # Another session model changes only the prices of responses that name none.
        repriced = terms != self._terms and self._unnamed
        if key != self._key or count < self._count or revised or repriced:
            self._reset(key)
        if terms != self._terms:
            self._terms = terms
            self._prices.pop(None, None)
        self._place = len(changes)
        seed = self._seed
        if count == self._count and seed is not None and seed.entries == entries:
            return seed
        for usage, model in state.responses.figures(self._count, count):
            prices = self._prices[model] if model in self._prices else prices_of(model)
            self._prices[model] = prices
            self._unnamed += model is None
            self._take(usage, logged, prices)
        self._count = count
        self._seed = HistorySeed(
            tuple(self._tails[-TAILS_KEPT:]),
            self._votes,
            self._last,
            self._totals.copy(),
            entries,
        )
        return self._seed

    def _reset(self, key: tuple[object, ...] | None) -> None:
        self._key, self._count, self._place = key, 0, 0
        self._prices, self._totals, self._unnamed = {}, Totals(), 0
        self._tails, self._votes, self._last = [], (0, 0), None
        self._seed = None

    def _take(self, usage: Usage, logged: bool, prices: Prices | None) -> None:
        prompt, output = usage.input_tokens_total, usage.output_tokens
        if not logged:
            self._totals.add_logged(0, 0, prompt, price(prices, prompt, 0, 0, output), None)
            return
        read, write = usage.cache_read_tokens, usage.cache_write_tokens
        uncached = usage.input_tokens
        cost = price(prices, uncached, write, read, output, usage.cache_write_1h_tokens)
        self._totals.add_logged(read, write, uncached, cost, cost)
        if read or write:
            self._tails.append(uncached)
            if len(self._tails) > 2 * TAILS_KEPT:
                del self._tails[:-TAILS_KEPT]
        if self._last is not None and read:
            vote = rule_vote(self._last, read)
            if vote is not None:
                first, second = self._votes
                self._votes = (first + 1, second) if vote == 0 else (first, second + 1)
        self._last = (read + write, prompt)

"""A prompt-cache simulation over a session's requests.

Each request is described by the prefixes of its prompt that a cache could hold
(``Boundary``: an identity of the prefix, its size in tokens, and whether the agent puts a cache
breakpoint there). Two cache models:

- ``breakpoints`` (Anthropic ``cache_control``): a request reads the longest prefix written
  before and still alive (the profile's TTL, 5 minutes, or an hour for what the log shows was
  written to live an hour; refreshed by each read); it writes an entry at each of its
  breakpoints beyond what it read (prefixes under the model's minimum cacheable size are not
  cached); what follows the last breakpoint is uncached input;
- ``automatic`` (OpenAI): every prefix a request sends is cached; a request reads the longest one
  seen before, counted in whole steps of ``granularity`` tokens and only from the model's minimum
  cacheable size on; writes are not billed (0).

With ``follow_log`` (the default), a request whose log has cache fields also tells the simulation
what the cache really holds afterwards (its logged read + write, at the prefix it wrote): each
request is then predicted from the real state left by the one before, the way the dashboard
predicts the next request, and an error (an unseen process restart, a cache eviction) does not
carry over to every later request. Each row compares the prediction, made before that request's
own figures were looked at, with the logged figures.

Prefix sizes come from the API's own reported prompt sizes where a prefix is a whole earlier
prompt, and from tokenizer estimates scaled to the reported size otherwise (see analyze.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ctxtop.engine.analysis.cache_tails import RunningMedian
from ctxtop.engine.analysis.snapshot import CacheRequest, CacheSummary
from ctxtop.engine.models.registry import ModelInfo, Prices
from ctxtop.engine.sessions.cache_clock import LONG_TTL, epoch_seconds

TOLERANCE = 0.05
# The key of the prefix a parent conversation's last request left cached, for a sub-agent that
# sends that conversation first (``SessionState.continues_parent``).
PARENT_KEY = "parent"


@dataclass(frozen=True, slots=True)
class Boundary:
    key: str
    tokens: int
    breakpoint: bool


@dataclass(frozen=True, slots=True)
class RequestShape:
    response_id: str
    line: int
    timestamp: str | None
    prompt: int
    output: int
    boundaries: tuple[Boundary, ...]  # in prompt order
    logged_read: int | None  # None: the log has no cache fields for this request
    logged_write: int | None
    logged_uncached: int
    # Message tokens the agent sent after its last breakpoint (besides the closing framing
    # every request has, which the simulation learns from the log): uncached by the rule.
    unmarked: int = 0
    sent: str | None = None  # when the request went out (its last message), if known
    # The model that answered it: its prices and minimum cacheable prefix (None: the
    # simulator's own).
    model: ModelInfo | None = None
    # How long what it wrote lives, when its log says (an hour: Anthropic's
    # ``ephemeral_1h_input_tokens``); None: the profile's TTL.
    write_ttl: float | None = None
    # The key of the prefix the agent sends alike on every request (its system prompt and
    # tools), which stays cached when the conversation after it does not (None: no such).
    system_key: str | None = None


@dataclass(frozen=True, slots=True)
class SharedEvidence:
    """What another conversation on the same endpoint and cache (Claude Code's parent session
    and its sub-agents) showed at ``time``: a closing-framing tail, a read that votes for a
    caching rule (0: up to the breakpoint, 1: the whole prompt), or a prefix it left cached
    (key, tokens up to its breakpoint, its whole prompt)."""

    time: float
    tail: int | None = None
    vote: int | None = None
    entry: tuple[str, int, int] | None = None
    ttl: float | None = None  # how long that prefix lives (None: the profile's TTL)
    model: str | None = None  # the model it was cached for


def rule_vote(left: tuple[int, int], read: int) -> int | None:
    """Which rule a read shows, given what the request before left: (its read + write, its
    prompt). 0: cached up to the breakpoint, 1: the whole prompt, None: cannot tell."""
    by_breakpoint, whole = left
    if whole - by_breakpoint < 2:
        return None  # the two rules cannot be told apart here
    to_breakpoint = abs(read - by_breakpoint)
    to_whole = abs(read - whole)
    if min(to_breakpoint, to_whole) > TOLERANCE * whole:
        return None
    return 0 if to_breakpoint < to_whole else 1


def _close(simulated: int, logged: int) -> bool:
    return abs(simulated - logged) <= TOLERANCE * logged


@dataclass
class _CacheState:
    # scoped key (``scoped``) -> (tokens, last used, TTL)
    entries: dict[str, tuple[int, float | None, float]]
    # Logged uncached input of earlier requests that read from the cache (their median).
    tails: RunningMedian
    # What the last logged request left cached by the breakpoint rule (read + write) and its
    # whole prompt, and the votes of later reads for each rule (see ``_learn``).
    last: tuple[int, int] | None = None
    votes: tuple[int, int] = (0, 0)  # (breakpoint rule, whole prompt)

    def copy(self) -> _CacheState:
        return _CacheState(dict(self.entries), self.tails.copy(), self.last, self.votes)

    @property
    def whole_prompt(self) -> bool:
        return self.votes[1] > self.votes[0]


def scoped(model: str | None, key: str) -> str:
    """A cache entry's key: prompt caches are kept per model (a request to another model
    reads nothing another model's requests wrote)."""
    return key if model is None else f"{model}\n{key}"


def _fresh_state(history: HistorySeed | None, ttl: float) -> _CacheState:
    """An empty cache; with ``history``, the framing tails and rule votes its log showed."""
    if history is None:
        return _CacheState({}, RunningMedian())
    tails = RunningMedian()
    for tail in history.tails:
        tails.add(tail)
    entries = {
        scoped(model, key): (tokens, epoch_seconds(used), lives if lives is not None else ttl)
        for key, tokens, used, lives, model in history.entries
    }
    return _CacheState(entries, tails, history.last, history.votes)


# A live session re-simulates from the newest snapshot before its first changed request; a few
# are kept, each a copy of the cache state, taken among the newest SNAPSHOTS * SNAPSHOT_EVERY
# requests only (a copy grows with the session: a cold run makes at most SNAPSHOTS of them).
SNAPSHOT_EVERY = 16
SNAPSHOTS = 8


@dataclass(slots=True)
class Totals:
    """The summary's running sums over the rows so far (summed in row order, as ``sum`` would)."""

    read: int = 0
    write: int = 0
    uncached: int = 0
    cost: float = 0
    costs: int = 0
    logged_cost: float = 0
    logged_costs: int = 0
    # Requests with a known agreement flag and those that agree: both, read, write.
    known: int = 0
    agree: int = 0
    read_known: int = 0
    read_agree: int = 0
    write_known: int = 0
    write_agree: int = 0

    def add(self, row: CacheRequest) -> None:
        self.read += row.read
        self.write += row.write
        self.uncached += row.uncached
        if row.cost is not None:
            self.cost, self.costs = self.cost + row.cost, self.costs + 1
        if row.logged_cost is not None:
            self.logged_cost += row.logged_cost
            self.logged_costs += 1
        if row.within_5pct is not None:
            self.known, self.agree = self.known + 1, self.agree + row.within_5pct
        if row.read_within_5pct is not None:
            self.read_known += 1
            self.read_agree += row.read_within_5pct
        if row.write_within_5pct is not None:
            self.write_known += 1
            self.write_agree += row.write_within_5pct

    def add_logged(
        self, read: int, write: int, uncached: int, cost: float | None, logged_cost: float | None
    ) -> None:
        """A request not simulated (history before the live context): its logged figures."""
        self.read += read
        self.write += write
        self.uncached += uncached
        if cost is not None:
            self.cost, self.costs = self.cost + cost, self.costs + 1
        if logged_cost is not None:
            self.logged_cost += logged_cost
            self.logged_costs += 1

    def plus(self, other: Totals) -> Totals:
        """These sums after ``other``'s (``other`` first, as its requests came first)."""
        if not (other.costs or other.logged_costs or other.read or other.write or other.uncached):
            return self
        return Totals(*(getattr(other, name) + getattr(self, name) for name in self.__slots__))

    def copy(self) -> Totals:
        return replace(self)

    def summary(self, style: str, ttl: float, rows: list[CacheRequest]) -> CacheSummary:
        def share(true: int, known: int) -> float | None:
            return round(100 * true / known, 1) if known else None

        return CacheSummary(
            style=style,
            ttl_seconds=ttl,
            requests=tuple(rows),
            read=self.read,
            write=self.write,
            uncached=self.uncached,
            cost=round(self.cost, 6) if self.costs else None,
            logged_cost=round(self.logged_cost, 6) if self.logged_costs else None,
            agreement_pct=share(self.agree, self.known),
            read_agreement_pct=share(self.read_agree, self.read_known),
            write_agreement_pct=share(self.write_agree, self.write_known),
        )


def price(
    prices: Prices | None, uncached: int, write: int, read: int, output: int, write_1h: int = 0
) -> float | None:
    """A request's cost at ``prices`` (None: the model has no prices), rounded to 6 places;
    ``write_1h`` of the ``write`` tokens live an hour and cost the longer lifetime's price."""
    if prices is None:
        return None
    cost = prices.cost(
        input_tokens=uncached,
        cache_write_tokens=write - write_1h,
        cache_read_tokens=read,
        output_tokens=output,
    )
    if write_1h:
        cost += prices.cost(cache_write_tokens=write_1h, cache_ttl_1h=True)
    return round(cost, 6)


# A prefix the history leaves cached: key, tokens, when last used, how long it lives (None: the
# profile's TTL), the model it was cached for.
CarriedEntry = tuple[str, int, str | None, float | None, str | None]


@dataclass(frozen=True, slots=True)
class HistorySeed:
    """What the requests before the live context (the last compaction or rewrite) leave the
    simulation, from their logged figures only (engine/analysis/cache_history.py): they are not
    simulated, request by request, since none of them is on the context any more.

    ``tails``: the uncached input they logged when they read or wrote the cache (the closing
    framing the simulation learns); ``votes`` and ``last``: the caching rule their reads showed
    and what the last of them left cached (see ``_CacheState``); ``totals``: their logged read,
    write, uncached input and costs, which the summary's figures start from; ``entries``: the
    prefixes they leave cached for the live context (key, tokens, when last used)."""

    tails: tuple[int, ...]
    votes: tuple[int, int]
    last: tuple[int, int] | None
    totals: Totals
    entries: tuple[CarriedEntry, ...] = ()


@dataclass(slots=True)
class _Snapshot:
    count: int  # requests simulated before it
    state: _CacheState
    applied: int
    totals: Totals


def _common_prefix(new: Sequence[RequestShape], old: list[RequestShape]) -> int:
    """How many leading shapes the two lists share (the same object or an equal one), found by
    bisection over whole-slice comparisons, which run at C speed."""
    if len(new) >= len(old) and list(new[: len(old)]) == old:
        return len(old)
    low, high = 0, min(len(new), len(old))  # a prefix of ``low`` is shared, of ``high + 1`` not
    while low < high:
        middle = (low + high + 1) // 2
        if list(new[:middle]) == old[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


class CacheSimulator:
    """Runs the simulation incrementally: requests already simulated are not simulated again
    (except the newest, whose usage the log may still revise)."""

    def __init__(
        self,
        style: str,
        *,
        ttl_seconds: float,
        granularity: int,
        min_cacheable: int,
        prices: Prices | None,
        follow_log: bool = True,
    ) -> None:
        self.style = style
        self.follow_log = follow_log
        self.ttl = ttl_seconds
        self.granularity = max(granularity, 1)
        self.min_cacheable = min_cacheable
        self.prices = prices
        self._history: HistorySeed | None = None
        self._state = _fresh_state(None, ttl_seconds)
        self._done: list[CacheRequest] = []
        self._shapes: list[RequestShape] = []
        self._shared: tuple[SharedEvidence, ...] = ()
        self._applied = 0  # how many of ``_shared`` the state has taken in
        self._totals = Totals()  # of ``_done``
        self._snapshots: list[_Snapshot] = []

    @staticmethod
    def _alive(entry: tuple[int, float | None, float], now: float | None) -> bool:
        used = entry[1]
        return now is None or used is None or now - used <= entry[2]

    def _ttl(self, shape: RequestShape) -> float:
        """How long what ``shape`` writes lives."""
        return shape.write_ttl if shape.write_ttl is not None else self.ttl

    def _tail(self, state: _CacheState) -> int:
        # Tokens after the last breakpoint (the request's closing framing): learnt from the
        # uncached input the API reported on earlier requests that hit the cache; 0 until then.
        return state.tails.median()

    def _minimum(self, shape: RequestShape) -> int:
        """The smallest prefix the model that answered caches."""
        return shape.model.min_cacheable_tokens if shape.model is not None else self.min_cacheable

    def _simulate(self, shape: RequestShape, state: _CacheState) -> CacheRequest:
        now = epoch_seconds(shape.timestamp)
        minimum = self._minimum(shape)
        read = 0
        hit: str | None = None
        model = shape.model.model if shape.model is not None else None
        keys = [scoped(model, boundary.key) for boundary in shape.boundaries]
        for key in keys:
            entry = state.entries.get(key)
            if entry is not None and self._alive(entry, now) and entry[0] > read:
                read, hit = min(entry[0], shape.prompt), key
        if hit is not None:
            tokens, _, lives = state.entries[hit]
            state.entries[hit] = (tokens, now, lives)
        ttl = self._ttl(shape)
        write = 0
        if self.style == "automatic":
            read = read // self.granularity * self.granularity
            if read < minimum:
                read = 0
            for key, boundary in zip(keys, shape.boundaries, strict=True):
                if boundary.tokens >= minimum:
                    state.entries[key] = (boundary.tokens, now, ttl)
        else:
            # An endpoint that caches the whole prompt ignores where the marker is.
            unmarked = 0 if state.whole_prompt else shape.unmarked
            # The last breakpoint: no other lies beyond it (an inferred system prefix that takes
            # in more than the log shows of the first prompt may reach past it).
            last = max(shape.prompt - self._tail(state) - unmarked, read)
            end = read
            held = hit  # the entry that holds this request's longest cached prefix afterwards
            for key, boundary in zip(keys, shape.boundaries, strict=True):
                if not boundary.breakpoint or boundary.tokens < minimum:
                    continue
                size = min(boundary.tokens, last)
                if boundary.tokens >= shape.prompt:
                    size = last
                if size > read:
                    state.entries[key] = (size, now, ttl)
                elif (kept := state.entries.get(key)) is not None and self._alive(kept, now):
                    # A marker inside the prefix read refreshes its own entry too.
                    state.entries[key] = (kept[0], now, kept[2])
                if size >= end:
                    held = key
                end = max(end, size)
            write = end - read
            if self.follow_log and held is not None:
                self._follow(state, shape, held, now)
        uncached = max(shape.prompt - read - write, 0)
        if (
            shape.logged_read is not None
            and (shape.logged_read or shape.logged_write)
            and not (shape.unmarked and not state.whole_prompt)
        ):
            # Any request that read or wrote the cache had its breakpoint placed: what it
            # reports uncached is the tail after it (the first request of a run included).
            state.tails.add(shape.logged_uncached)
        return self._row(shape, read, write, uncached)

    @staticmethod
    def _learn(state: _CacheState, shape: RequestShape) -> None:
        """Which prefix a logged read shows the previous request left cached.

        Anthropic caches up to the last breakpoint (the read that follows equals the previous
        read + write); some endpoints and proxies cache the whole prompt sent, the uncached tail
        included. A read nearer one figure than the other is a vote for that rule.
        """
        if state.last is None or not shape.logged_read:
            return
        vote = rule_vote(state.last, shape.logged_read)
        if vote is not None:
            first, second = state.votes
            state.votes = (first + 1, second) if vote == 0 else (first, second + 1)

    def _follow(
        self, state: _CacheState, shape: RequestShape, held: str, now: float | None
    ) -> None:
        """Set the cache to what the log says this request left in it."""
        if shape.logged_read is None or shape.logged_write is None:
            return
        self._learn(state, shape)
        read = shape.logged_read
        if (
            shape.system_key is not None
            and state.last is not None
            and 0 < read < (1 - TOLERANCE) * state.last[0]
        ):
            # The API read less than the request before left cached: the conversation after
            # the system prompt and tools was not found, and what was is their prefix.
            model = shape.model.model if shape.model is not None else None
            state.entries[scoped(model, shape.system_key)] = (read, now, self._ttl(shape))
        cached = read + shape.logged_write
        state.last = (cached, shape.prompt)
        if cached > 0 and state.whole_prompt:
            cached = shape.prompt
        if cached > 0:
            state.entries[held] = (cached, now, self._ttl(shape))
        else:
            state.entries.pop(held, None)

    def _cost(self, shape: RequestShape, uncached: int, write: int, read: int) -> float | None:
        """What the request costs with these figures; writes that live an hour (the log's or
        the settings' lifetime) at the hour's price."""
        prices = shape.model.prices if shape.model is not None else self.prices
        write_1h = write if self._ttl(shape) >= LONG_TTL else 0
        return price(prices, uncached, write, read, shape.output, write_1h)

    def _row(self, shape: RequestShape, read: int, write: int, uncached: int) -> CacheRequest:
        logged = shape.logged_read is not None and shape.logged_write is not None
        read_agrees = write_agrees = None
        logged_cost = None
        if shape.logged_read is not None and shape.logged_write is not None:
            read_agrees = _close(read, shape.logged_read)
            write_agrees = _close(write, shape.logged_write)
            logged_cost = self._cost(
                shape, shape.logged_uncached, shape.logged_write, shape.logged_read
            )
        return CacheRequest(
            response_id=shape.response_id,
            line=shape.line,
            prompt=shape.prompt,
            read=read,
            write=write,
            uncached=uncached,
            logged_read=shape.logged_read if logged else None,
            logged_write=shape.logged_write if logged else None,
            read_difference=read - shape.logged_read if shape.logged_read is not None else None,
            write_difference=(
                write - shape.logged_write if shape.logged_write is not None else None
            ),
            cost=self._cost(shape, uncached, write, read),
            logged_cost=logged_cost,
            within_5pct=None if read_agrees is None else bool(read_agrees and write_agrees),
            read_within_5pct=read_agrees,
            write_within_5pct=write_agrees,
        )

    def run(
        self,
        shapes: Sequence[RequestShape],
        shared: Sequence[SharedEvidence] = (),
        history: HistorySeed | None = None,
    ) -> CacheSummary:
        """``shared``: what other conversations on the same cache showed, in time order; each
        request sees what was logged before it went out. ``history``: what the requests before
        ``shapes`` logged (they are not simulated); the summary's figures include theirs."""
        # A request whose shape changed (the system prefix became known, a compaction took its
        # messages off the context) is simulated again, with everything after it: from the
        # newest snapshot before it (a live session changes only its newest requests).
        shared = tuple(shared)
        if shared != self._shared or history is not self._history:
            self._history = history
            self._restart()
            self._shared = shared
        same = _common_prefix(shapes, self._shapes)
        if same < len(self._shapes):
            self._rewind(same)
        # Every request but the newest is final; the newest is simulated on a copy.
        recent = len(shapes) - SNAPSHOTS * SNAPSHOT_EVERY
        for shape in shapes[len(self._shapes) : max(len(shapes) - 1, len(self._shapes))]:
            if len(self._done) % SNAPSHOT_EVERY == 0 and len(self._done) >= recent:
                self._snapshots = [*self._snapshots[-(SNAPSHOTS - 1) :], self._snapshot()]
            self._apply_shared(shape, self._state)
            row = self._simulate(shape, self._state)
            self._done.append(row)
            self._totals.add(row)
            self._shapes.append(shape)
        rows = list(self._done)
        totals = self._totals
        if len(shapes) > len(self._done):
            state, applied = self._state.copy(), self._applied
            self._apply_shared(shapes[-1], state)
            rows.append(self._simulate(shapes[-1], state))
            self._applied = applied
            totals = totals.copy()
            totals.add(rows[-1])
        if self._history is not None:
            totals = totals.plus(self._history.totals)
        return totals.summary(self.style, self.ttl, rows)

    def _restart(self) -> None:
        self._state, self._done = _fresh_state(self._history, self.ttl), []
        self._shapes = []
        self._applied, self._totals, self._snapshots = 0, Totals(), []

    def _snapshot(self) -> _Snapshot:
        return _Snapshot(len(self._done), self._state.copy(), self._applied, self._totals.copy())

    def _rewind(self, count: int) -> None:
        """Back to the newest snapshot taken at or before ``count`` requests simulated."""
        while self._snapshots and self._snapshots[-1].count > count:
            self._snapshots.pop()
        if not self._snapshots:
            self._restart()
            return
        snapshot = self._snapshots[-1]
        self._state, self._applied = snapshot.state.copy(), snapshot.applied
        self._totals = snapshot.totals.copy()
        del self._done[snapshot.count :]
        del self._shapes[snapshot.count :]

    def _apply_shared(self, shape: RequestShape, state: _CacheState) -> None:
        """Take in what other conversations logged before this request went out."""
        sent = epoch_seconds(shape.sent) or epoch_seconds(shape.timestamp)
        entries: list[SharedEvidence] = []
        while self._applied < len(self._shared) and (
            sent is not None and self._shared[self._applied].time < sent
        ):
            evidence = self._shared[self._applied]
            self._applied += 1
            if evidence.tail is not None:
                state.tails.add(evidence.tail)
            if evidence.vote is not None and self.follow_log:
                first, second = state.votes
                state.votes = (first + 1, second) if evidence.vote == 0 else (first, second + 1)
            if evidence.entry is not None:
                entries.append(evidence)
        for evidence in entries:  # sized by what the rule and the framing are now
            assert evidence.entry is not None
            key, by_breakpoint, whole = evidence.entry
            tokens = whole if state.whole_prompt else by_breakpoint
            if not self.follow_log:
                # The open loop takes from the log only the prompt sizes and the framing.
                tokens = whole - self._tail(state)
            if tokens >= self._minimum(shape):
                ttl = evidence.ttl if evidence.ttl is not None else self.ttl
                state.entries[scoped(evidence.model, key)] = (tokens, evidence.time, ttl)

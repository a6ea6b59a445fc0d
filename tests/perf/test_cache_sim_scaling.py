"""The cache simulation's cost grows linearly with a session's requests.

Its per-request statistic, the median of the closing-framing tails logged so far, used to sort
the whole history for every request: a day-long session got slower every hour. The work is
counted, not timed: every tail the log reports is a ``Counted`` int that counts the comparisons
made with it, whichever way the median is computed.
"""

from __future__ import annotations

import random
import statistics

from ctxtop.engine.analysis.cache_sim import Boundary, CacheSimulator, RequestShape
from ctxtop.engine.analysis.cache_tails import RunningMedian

COMPARISONS = [0]


class Counted(int):
    """An int that counts the order comparisons it takes part in."""

    def _count(self) -> None:
        COMPARISONS[0] += 1

    def __lt__(self, other: object) -> bool:
        self._count()
        return int(self) < int(other)  # type: ignore[call-overload]

    def __gt__(self, other: object) -> bool:
        self._count()
        return int(self) > int(other)  # type: ignore[call-overload]

    def __le__(self, other: object) -> bool:
        self._count()
        return int(self) <= int(other)  # type: ignore[call-overload]

    def __ge__(self, other: object) -> bool:
        self._count()
        return int(self) >= int(other)  # type: ignore[call-overload]

    def __neg__(self) -> Counted:
        return Counted(-int(self))


def session(requests: int) -> list[RequestShape]:
    """A Claude Code-like session: each prompt grows by a round, reads what the one before
    wrote, and logs an uncached tail of a few framing tokens."""
    rng = random.Random(requests)
    shapes = []
    prompt = 20_000
    for index in range(requests):
        grown = rng.randint(200, 3_000)
        tail = Counted(rng.randint(3, 60))
        shapes.append(
            RequestShape(
                response_id=f"msg_{index}",
                line=index + 1,
                timestamp=f"2026-11-23T10:{index // 60 % 60:02d}:{index % 60:02d}Z",
                prompt=prompt + grown,
                output=300,
                boundaries=(
                    Boundary("system", 12_000, True),
                    Boundary(f"end:{index - 1}", prompt, False),
                    Boundary(f"end:{index}", prompt + grown, True),
                ),
                logged_read=prompt - tail,
                logged_write=grown,
                logged_uncached=tail,
            )
        )
        prompt += grown
    return shapes


def comparisons(requests: int) -> int:
    simulator = CacheSimulator(
        "breakpoints", ttl_seconds=300, granularity=1, min_cacheable=1024, prices=None
    )
    shapes = session(requests)
    COMPARISONS[0] = 0
    summary = simulator.run(shapes)
    assert len(summary.requests) == requests
    assert summary.read > 0  # the requests did read the cache: the tails were learnt
    return COMPARISONS[0]


def test_doubling_the_requests_at_most_doubles_the_work() -> None:
    small, large = comparisons(3_000), comparisons(6_000)
    assert small > 3_000  # the counter does see the median's work
    assert large <= 2.2 * small, (small, large)


def test_running_median_equals_the_median_of_everything_so_far() -> None:
    rng = random.Random(16)
    for _ in range(200):
        running, values = RunningMedian(), []
        for _ in range(rng.randint(1, 120)):
            value = rng.choice([rng.randint(0, 40), rng.randint(0, 10**6), 7])
            running.add(value)
            values.append(value)
            assert running.median() == int(statistics.median(values))
    assert RunningMedian().median() == 0

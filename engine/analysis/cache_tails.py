"""The running median of the closing-framing tails the cache simulation learns from the log.

The simulation needs, before each request, the median of every tail logged so far. Sorting the
whole history for each request made a session's cost grow with the square of its requests; two
heaps (the lower half as a max-heap of negated values, the upper half as a min-heap) give the
same figure in O(log n) per new tail.
"""

from __future__ import annotations

from heapq import heappop, heappush


class RunningMedian:
    __slots__ = ("_high", "_low")

    def __init__(self, low: list[int] | None = None, high: list[int] | None = None) -> None:
        self._low = low if low is not None else []  # negated; holds the extra value when odd
        self._high = high if high is not None else []

    def add(self, value: int) -> None:
        if self._low and value > -self._low[0]:
            heappush(self._high, value)
        else:
            heappush(self._low, -value)
        if len(self._low) > len(self._high) + 1:
            heappush(self._high, -heappop(self._low))
        elif len(self._high) > len(self._low):
            heappush(self._low, -heappop(self._high))

    def median(self) -> int:
        """``int(statistics.median(values))``, 0 before any value."""
        if not self._low:
            return 0
        if len(self._low) > len(self._high):
            return -self._low[0]
        # statistics.median averages the two middle values as a float; int() truncates it.
        return int((-self._low[0] + self._high[0]) / 2)

    def copy(self) -> RunningMedian:
        return RunningMedian(list(self._low), list(self._high))

    def __len__(self) -> int:
        return len(self._low) + len(self._high)

"""Requests left before the agent compacts, from how fast the context grew lately."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from ctxtop.engine.analysis.snapshot import Forecast
from ctxtop.engine.tokens.short import short_tokens
from ctxtop.engine.words import plural

# The growth rate is taken over this many of the latest requests (since the last compaction).
RECENT = 10


def forecast(
    history: Sequence[int], current: int, target: int | None, until: str = "auto-compaction"
) -> Forecast:
    """``history``: context size after each request since the last compaction, oldest first.

    The estimate is (target - current) / mean growth per request; ``low`` and ``high`` use the
    mean plus and minus one standard deviation of the recent per-request growth (``high`` is
    None when growth could be zero or negative within that spread).
    """
    recent = list(history[-(RECENT + 1) :])
    growth = [later - earlier for earlier, later in itertools.pairwise(recent)]
    if target is None:
        reason = "the profile has no auto-compact point"
        return Forecast(None, None, None, None, None, len(growth), None, reason)
    left = max(target - current, 0)
    if not growth:
        # The growth is measured between requests on the context since the last compaction.
        reason = "it needs two requests since the last compaction"
        return Forecast(None, None, None, None, None, 0, target, reason)
    mean = sum(growth) / len(growth)
    spread = (
        math.sqrt(sum((g - mean) ** 2 for g in growth) / (len(growth) - 1))
        if len(growth) > 1
        else 0.0
    )
    if mean <= 0:
        reason = "the context is not growing"
        return Forecast(None, None, None, mean, spread, len(growth), target, reason)
    low = left / (mean + spread)
    high = left / (mean - spread) if mean - spread > 0 else None
    return Forecast(
        round(left / mean, 1),
        round(low, 1),
        None if high is None else round(high, 1),
        round(mean, 1),
        round(spread, 1),
        len(growth),
        target,
        f"until {until}, at the mean growth of the last "
        + ("request" if len(growth) == 1 else f"{len(growth)} requests"),
    )


def forecast_text(forecast: Forecast) -> str:
    """ "~N requests left before auto-compaction (low–high) at +G per request" (no range when
    both ends round to one number), or why there is no forecast; the same words on the
    dashboard and in ``ctxtop report``."""
    if forecast.requests_left is None:
        return f"no forecast: {forecast.basis}"
    text = f"~{plural(round(forecast.requests_left), 'request')} left before auto-compaction"
    low = "?" if forecast.low is None else f"{forecast.low:,.0f}"
    high = "?" if forecast.high is None else f"{forecast.high:,.0f}"
    if low != high:
        text += f" ({low}–{high})"
    if forecast.growth_per_request is not None:
        text += f" at +{short_tokens(round(forecast.growth_per_request))} per request"
    return text

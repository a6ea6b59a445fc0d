"""The cache clock: how long the prompt cache stays warm, and what waiting past that costs.

``cache_clock`` is the one place that decides it; the dashboard's Context panel, ``ctxtop
report`` and ``ctxtop statusline`` all call it with their own "now", on the sample's
``cache_prefix`` (``cached_prefix``): what the last request left cached, by the rule the cache
simulation (engine/analysis/cache_sim.py) follows a logged request with: its read + write, for
the lifetime of what was last written (``write_ttl``: an hour where the log shows 1-hour writes),
else the agent's settings' lifetime, else 5 minutes. After expiry the next request writes that
whole prefix again at the model's cache-write price, where now it reads it at the read price.

When Claude Code's status-line JSON carries its own ``prompt_cache`` block (``warm``, ``ttl``,
``expires_at``, ``hit_ratio``, ``last_miss_cause``), its figures win over ctxtop's and the clock
says so (``source``: "Claude Code"); the prefix and prices stay ctxtop's.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any

from ctxtop.engine.models.registry import Prices
from ctxtop.engine.models.registry import lookup as model_info
from ctxtop.engine.sessions.model import SessionState
from ctxtop.engine.sessions.responses import Usage

CTXTOP = "ctxtop"
CLAUDE_CODE = "Claude Code"
# Anthropic's longer cache lifetime (``cache_control.ttl: "1h"``) and the default, in seconds.
LONG_TTL = 3600.0
DEFAULT_TTL = 300.0
# Responses looked back over for the last one that wrote to the cache (its writes' lifetime).
LOOKBACK = 64


def epoch_seconds(timestamp: str | None) -> float | None:
    if not timestamp:
        return None
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def write_ttl(usage: Usage) -> float | None:
    """How long what a request wrote lives, when its log says (an hour: Anthropic's
    ``ephemeral_1h_input_tokens``); None: the default or the settings' lifetime."""
    return LONG_TTL if usage.cache_write_1h_tokens else None


@dataclass(frozen=True, slots=True)
class CachedPrefix:
    """What the prompt cache holds after the session's last request: the prefix the next
    request reads while it lives, when it was last used and how long it lives."""

    tokens: int  # the last request's cache read + write, as logged
    used_at: float | None  # epoch seconds of that request
    ttl_seconds: float
    ttl_source: str  # log (1-hour writes) | settings (the agent's) | default
    model: str | None


def writes_for_an_hour(state: SessionState) -> bool:
    """The session's last cache write lived an hour (its log says so): a rewrite is priced so."""
    prefix = cached_prefix(state)
    return prefix is not None and prefix.ttl_seconds >= LONG_TTL


def cached_prefix(state: SessionState, settings_ttl: float | None = None) -> CachedPrefix | None:
    """The prefix the last request left cached (None: it read and wrote nothing, or there is no
    request yet); ``settings_ttl``: the lifetime the agent's settings choose."""
    last = state.last_response
    if last is None or last.usage.cache_read_tokens + last.usage.cache_write_tokens <= 0:
        return None
    lives: float | None = None
    for response in itertools.islice(reversed(state.responses.values()), LOOKBACK):
        if response.usage.cache_write_tokens:  # a read keeps the lifetime it was written with
            lives = write_ttl(response.usage)
            break
    if lives is not None:
        ttl, source = lives, "log"
    elif settings_ttl is not None:
        ttl, source = settings_ttl, "settings"
    else:
        ttl, source = DEFAULT_TTL, "default"
    usage = last.usage
    return CachedPrefix(
        usage.cache_read_tokens + usage.cache_write_tokens,
        epoch_seconds(last.timestamp),
        ttl,
        source,
        last.model or state.model,
    )


@dataclass(frozen=True, slots=True)
class AgentCache:
    """The ``prompt_cache`` block of Claude Code's status-line JSON (None: not given)."""

    warm: bool | None = None
    ttl_seconds: float | None = None
    expires_at: float | None = None  # epoch seconds
    hit_ratio: float | None = None  # 0..1
    last_miss_cause: str | None = None


@dataclass(frozen=True, slots=True)
class CacheClock:
    warm: bool
    expires_at: float | None  # epoch seconds (None: unknown, only the agent's warm flag)
    seconds_left: float  # 0 once cold
    ttl_seconds: float | None
    ttl_source: str  # log | settings | default | Claude Code
    source: str  # who says warm or cold: ctxtop (from the log) | Claude Code
    prefix_tokens: int  # what the next request reads now, and writes again after expiry
    read_cost: float | None  # the prefix read from the cache (sending now), USD
    rewrite_cost: float | None  # the prefix written again (sending after expiry), USD
    hit_ratio: float | None = None
    last_miss_cause: str | None = None

    @property
    def waiting_cost(self) -> float | None:
        """What sending after expiry costs more than sending now."""
        if self.read_cost is None or self.rewrite_cost is None:
            return None
        return self.rewrite_cost - self.read_cost

    def to_json(self) -> dict[str, Any]:
        return {
            "warm": self.warm,
            "expires_at": _iso(self.expires_at),
            "seconds_left": round(self.seconds_left),
            "ttl_seconds": self.ttl_seconds,
            "ttl_source": self.ttl_source,
            "source": self.source,
            "prefix_tokens": self.prefix_tokens,
            "read_cost_usd": _usd(self.read_cost),
            "rewrite_cost_usd": _usd(self.rewrite_cost),
            "waiting_cost_usd": _usd(self.waiting_cost),
            "hit_ratio": self.hit_ratio,
            "last_miss_cause": self.last_miss_cause,
        }


def _usd(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    text = datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")
    return text.replace("+00:00", "Z")


def _prices(model: str | None) -> Prices | None:
    prices = model_info(model).prices
    return prices if isinstance(prices, Prices) else None


def cache_clock(
    warm: CachedPrefix | None,
    now: float,
    model: str | None = None,
    agent: AgentCache | None = None,
) -> CacheClock | None:
    """The clock at ``now`` (epoch seconds) for the prefix ``warm`` the last request left cached
    (None: no request cached anything); ``model``: whose prices, when the prefix does not say;
    ``agent``: Claude Code's own figures, which win."""
    if warm is None:
        return None
    ttl: float | None = warm.ttl_seconds
    ttl_source = warm.ttl_source
    expires = warm.used_at + warm.ttl_seconds if warm.used_at is not None else None
    source = CTXTOP
    is_warm = expires is not None and now < expires
    if agent is not None:
        source = CLAUDE_CODE
        if agent.ttl_seconds is not None:
            ttl, ttl_source = agent.ttl_seconds, CLAUDE_CODE
            expires = warm.used_at + ttl if warm.used_at is not None else None
        if agent.expires_at is not None:
            expires = agent.expires_at
        is_warm = expires is not None and now < expires
        if agent.warm is not None and agent.warm != is_warm:
            # Its word wins; a time that says otherwise is left out rather than contradicted.
            is_warm, expires = agent.warm, None
    left = max(expires - now, 0.0) if expires is not None and is_warm else 0.0
    prices = _prices(warm.model or model)
    read_cost = rewrite_cost = None
    if prices is not None:
        read_cost = prices.cost(cache_read_tokens=warm.tokens)
        # OpenAI and Google bill no cache writes: an expired prefix is uncached input again.
        written = prices.cost(cache_write_tokens=warm.tokens, cache_ttl_1h=(ttl or 0) >= LONG_TTL)
        rewrite_cost = written or prices.cost(input_tokens=warm.tokens)
    return CacheClock(
        warm=is_warm,
        expires_at=expires,
        seconds_left=left,
        ttl_seconds=ttl,
        ttl_source=ttl_source,
        source=source,
        prefix_tokens=warm.tokens,
        read_cost=read_cost,
        rewrite_cost=rewrite_cost,
        hit_ratio=agent.hit_ratio if agent is not None else None,
        last_miss_cause=agent.last_miss_cause if agent is not None else None,
    )


# -- Claude Code's status-line block ---------------------------------------------------------


def _seconds(value: Any) -> float | None:
    """A TTL as Claude Code may give it: seconds, or "5m" / "1h" / "300s"."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) and value > 0 else None
    if isinstance(value, str):
        text = value.strip().lower()
        scale = {"s": 1, "m": 60, "h": 3600}.get(text[-1:])
        try:
            number = float(text[:-1] if scale else text) * (scale or 1)
        except ValueError:
            return None
        return number if math.isfinite(number) and number > 0 else None
    return None


def _epoch(value: Any) -> float | None:
    """A time as ISO 8601 text or epoch seconds (or milliseconds)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and math.isfinite(value) and value > 0:
        return value / 1000 if value > 1e11 else float(value)
    return epoch_seconds(value) if isinstance(value, str) else None


def _ratio(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    ratio = value / 100 if value > 1 else float(value)
    return ratio if 0 <= ratio <= 1 else None


def agent_cache(data: Any) -> AgentCache | None:
    """Claude Code's ``prompt_cache`` block of the status-line JSON, or None when it has none
    (or nothing in it ctxtop can read)."""
    block = data.get("prompt_cache") if isinstance(data, dict) else None
    if not isinstance(block, dict):
        return None
    warm = block.get("warm")
    cause = block.get("last_miss_cause")
    found = AgentCache(
        warm=warm if isinstance(warm, bool) else None,
        ttl_seconds=_seconds(block.get("ttl", block.get("ttl_seconds"))),
        expires_at=_epoch(block.get("expires_at")),
        hit_ratio=_ratio(block.get("hit_ratio")),
        last_miss_cause=cause.strip() or None if isinstance(cause, str) else None,
    )
    return None if found == AgentCache() else found


# -- words -------------------------------------------------------------------------------------


def countdown(seconds: float) -> str:
    """m:ss (h:mm:ss from an hour on), rounded up: 0:01 until it is gone."""
    whole = math.ceil(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def ttl_words(seconds: float) -> str:
    """5 min, 1 h, 90 s."""
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"{seconds / 3600:.0f} h"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


def clock_text(clock: CacheClock, now: float) -> str:
    """The report's line: state, costs, provenance."""
    return f"{state_text(clock, now)}; {cost_text(clock)} ({provenance_text(clock)})"


def state_text(clock: CacheClock, now: float, tz: tzinfo | None = None) -> str:
    """``cache warm 3:12`` or ``cache cold since 14:05`` (in ``tz``, else local time; a date
    when not today)."""
    if clock.warm:
        left = f" {countdown(clock.seconds_left)}" if clock.expires_at is not None else ""
        return f"cache warm{left}"
    if clock.expires_at is None:
        return "cache cold"
    expired = datetime.fromtimestamp(clock.expires_at, tz).astimezone(tz)
    today = datetime.fromtimestamp(now, tz).astimezone(tz).date()
    since = expired.strftime("%H:%M" if expired.date() == today else "%b %d %H:%M")
    return f"cache cold since {since}"


def usd(value: float | None) -> str:
    if value is None:
        return "-"
    return f"${value:.2f}" if value >= 0.995 else f"${value:.3f}"


def cost_text(clock: CacheClock) -> str:
    """What the next request pays for the prefix: now, and after expiry."""
    tokens = f"{clock.prefix_tokens:,}"
    if clock.rewrite_cost is None:
        return f"after expiry the next request writes {tokens} tokens again (no prices)"
    if not clock.warm:
        return f"next request writes {tokens} tokens again: {usd(clock.rewrite_cost)}"
    return (
        f"next request {usd(clock.read_cost)} now, {usd(clock.rewrite_cost)} after expiry"
        f" ({tokens} tokens written again)"
    )


def agent_words(clock: CacheClock) -> str:
    """``Claude Code, hit ratio 93%, last miss: ttl expired``: who said warm or cold, with its
    own figures."""
    parts = [CLAUDE_CODE]
    if clock.hit_ratio is not None:
        parts.append(f"hit ratio {100 * clock.hit_ratio:.0f}%")
    if clock.last_miss_cause:
        parts.append(f"last miss: {clock.last_miss_cause}")
    return ", ".join(parts)


def provenance_text(clock: CacheClock) -> str:
    """Where the clock's facts come from, in a few words."""
    if clock.source == CLAUDE_CODE:
        return agent_words(clock)
    ttl = f"TTL {ttl_words(clock.ttl_seconds)}" if clock.ttl_seconds else "TTL unknown"
    why = {
        "log": "the log's 1-hour writes" if (clock.ttl_seconds or 0) >= LONG_TTL else "the log",
        "settings": "the agent's settings",
        "default": "the default",
    }.get(clock.ttl_source, clock.ttl_source)
    return f"{ttl} ({why}), ctxtop's estimate from the log"


def action_timing(clock: CacheClock, rewrite_extra: float | None, saved_tokens: int) -> str:
    """Whether an edit or a compaction is cheaper now or after the cache expires. Now (warm) it
    costs its own rewrite (``rewrite_extra``: writing, not reading, the tokens after its first
    change); after expiry the next request writes the whole (smaller) prefix again anyway, so
    the action's rewrite is free but that write is not."""
    prefix = clock.prefix_tokens
    waiting = clock.waiting_cost
    if waiting is None or prefix <= 0:
        return f"{state_text(clock, 0) if clock.warm else 'cache cold'}: no prices for the model"
    later = max(prefix - saved_tokens, 0) * waiting / prefix
    if not clock.warm:
        return f"cache cold: the prefix is rewritten anyway ({usd(later)}), acting is free"
    now = rewrite_extra or 0.0
    acting, waiting_for = f"now ({usd(now)})", f"after expiry ({usd(later)})"
    first, second = (acting, waiting_for) if now <= later else (waiting_for, acting)
    return f"{state_text(clock, 0)}: cheaper {first} than {second}"

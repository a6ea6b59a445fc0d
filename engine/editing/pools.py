"""Clearing down to a budget: which old tool results stay, through two budget pools.

As Copilot's inline-completion context keeps its snippets (the seed's ``mandatory`` and
``optional`` pools): the results are ranked by priority (the engine's relevance score,
engine/analysis/relevance.py, as a share of the session's best); those of priority >= 0.7 spend
from the mandatory pool, the whole budget, first; the rest spend from the optional pool, whose
size the fill mode sets (``minimal`` 0, ``fillHalf`` budget/2, ``double`` min(budget, what the
mandatory results took), ``fill`` the budget), never past what the mandatory pool left. What
neither pool keeps is cleared. The budget is the target less what the context holds besides
these results (engine/forks/edit.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.tokens.amount import positive_amount

MANDATORY_PRIORITY = 0.7
FILL_MODES = ("minimal", "fillHalf", "double", "fill")
DEFAULT_FILL = "fill"
MANDATORY, OPTIONAL = "mandatory", "optional"


@dataclass(frozen=True, slots=True)
class Target:
    """What the whole context should come down to: tokens, or a % of the window."""

    value: float
    percent: bool

    @classmethod
    def parse(cls, text: str) -> Target:
        """``"60%"``, ``"120k"`` or ``"120000"``; an error naming the text otherwise."""
        raw = text.strip()
        if raw.endswith("%"):
            try:
                value = float(raw[:-1])
            except ValueError:
                value = -1
            if not 0 < value <= 100:
                raise CtxtopError(f"not a percentage of the window: {text!r} (e.g. 60%)")
            return cls(value, True)
        tokens = positive_amount(raw)
        if tokens is None:
            raise CtxtopError(f"not a token count or a percentage: {text!r} (e.g. 120k or 60%)")
        return cls(tokens, False)

    def tokens(self, window: int) -> int:
        return int(window * self.value / 100) if self.percent else int(self.value)

    def __str__(self) -> str:
        return f"{self.value:g}%" if self.percent else str(int(self.value))


@dataclass(frozen=True, slots=True)
class Candidate:
    """An old result the policy would clear: its id, tokens kept whole, tokens once cleared
    (its placeholder), its priority (0..1)."""

    call_id: str
    tokens: int
    cleared_tokens: int
    priority: float
    order: int = 0  # its place in the session: of equal priority, the newer stays first


@dataclass(frozen=True, slots=True)
class Kept:
    call_id: str
    tokens: int
    priority: float
    pool: str  # mandatory | optional
    order: int = 0
    spent: int = 0  # what keeping it took from its pool: its tokens less its placeholder's


@dataclass(frozen=True, slots=True)
class Pools:
    budget: int  # for these results, whole or cleared
    fill: str
    mandatory_size: int  # the budget less every result's placeholder: what keeping may add
    optional_size: int
    kept: tuple[Kept, ...]  # by priority, highest first

    @property
    def kept_ids(self) -> frozenset[str]:
        return frozenset(item.call_id for item in self.kept)

    def spent(self, pool: str) -> int:
        return sum(item.spent for item in self.kept if item.pool == pool)


def optional_size(fill: str, budget: int, mandatory_used: int) -> int:
    if fill not in FILL_MODES:
        raise CtxtopError(f"unknown fill mode {fill!r}; use {', '.join(FILL_MODES)}")
    return {
        "minimal": 0,
        "fillHalf": budget // 2,
        "double": min(budget, mandatory_used),
        "fill": budget,
    }[fill]


def _spend(ranked: Sequence[Candidate], pool: str, size: int) -> list[Kept]:
    """Each of ``ranked`` in order, kept while what keeping it whole adds fits in ``size``."""
    kept: list[Kept] = []
    used = 0
    for item in ranked:
        extra = item.tokens - item.cleared_tokens
        if used + extra <= size:
            kept.append(Kept(item.call_id, item.tokens, item.priority, pool, item.order, extra))
            used += extra
    return kept


def keep_within(candidates: Sequence[Candidate], budget: int, fill: str = DEFAULT_FILL) -> Pools:
    """The candidates kept whole within ``budget`` tokens (each cleared one still costs its
    placeholder), highest priority first, through the two pools."""
    ranked = sorted(candidates, key=lambda item: (-item.priority, -item.order))
    # Every candidate costs at least its cleared form; keeping it whole costs the difference.
    room = max(budget - sum(item.cleared_tokens for item in ranked), 0)
    high = [item for item in ranked if item.priority >= MANDATORY_PRIORITY]
    kept = _spend(high, MANDATORY, room)
    used = sum(item.spent for item in kept)
    optional = min(optional_size(fill, room, used), room - used)
    low = [item for item in ranked if item.priority < MANDATORY_PRIORITY]
    kept += _spend(low, OPTIONAL, optional)
    kept.sort(key=lambda item: (-item.priority, -item.order))
    return Pools(max(budget, 0), fill, room, optional, tuple(kept))

"""A size limit given on the command line: a number of tokens, or a percentage of something."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ctxtop.engine.errors import CtxtopError


@dataclass(frozen=True, slots=True)
class Limit:
    value: float
    percent: bool  # True: ``value`` % of a total; False: ``value`` tokens

    @classmethod
    def parse(cls, text: str) -> Limit:
        """``"50%"`` or ``"2000"``; error on anything else (or on zero, or past 100 %)."""
        raw = text.strip()
        percent = raw.endswith("%")
        number = raw[:-1].strip() if percent else raw
        try:
            value = float(number) if percent else int(number)
        except ValueError:
            raise CtxtopError(f"not a token count or a percentage: {text!r}") from None
        if not math.isfinite(value) or value <= 0 or (percent and value > 100):
            raise CtxtopError(f"must be above 0 (and at most 100%): {text!r}")
        return cls(value, percent)

    def of(self, total: int) -> int:
        """The limit in tokens: ``value`` tokens, or ``value`` % of ``total`` (at least 1)."""
        if not self.percent:
            return int(self.value)
        return max(1, int(total * self.value / 100))

    def __str__(self) -> str:
        return f"{self.value:g}%" if self.percent else str(int(self.value))

"""Reconciling tokenizer estimates with the token counts the API reported.

The API's figures always win. Per-message estimates are corrected two ways: a rolling correction
factor learnt from every (estimate, actual) pair, and exact shares: when a request's actual total
is known, it is spread over that request's messages in proportion to their estimates, and each
share is remembered by the message's digest (role + content + model family), so the same message
shows the same calibrated count in later requests.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from engine.tokens.cache import content_digest

# new factor = 0.7 x old + 0.3 x (actual / estimate)
FACTOR_KEEP = 0.7
FACTOR_LEARN = 0.3


class Provenance(StrEnum):
    """Where a token figure comes from; every figure ctxtop shows carries one."""

    REPORTED = "reported"  # the API's own usage figures
    CALIBRATED = "calibrated"  # a share of a reported total, by the message's estimate
    ESTIMATED = "estimated"  # the tokenizer (or the character rule), corrected by the factor
    INFERRED = "inferred"  # derived by subtraction, e.g. a system prompt the log does not hold
    COMPACTION = "compaction"  # the agent's own post-compaction figure
    MEASURED = "measured"  # counted from the request itself as ctxtop's proxy forwarded it
    # Counted from the request's text as the agent's log records it, or the agent's own count
    # it logged (Copilot CLI's systemTokens, toolDefinitionsTokens, currentTokens).
    LOGGED = "logged"


class Method(StrEnum):
    API = "api"
    TOKENIZER = "tokenizer"
    CHARS = "chars"


@dataclass(frozen=True)
class SafetyMargins:
    """Head-room added before answering "will it fit?", by how a figure was obtained."""

    reported: float = 0.02
    tokenizer: float = 0.05
    chars: float = 0.10

    def for_method(self, method: Method) -> float:
        if method is Method.API:
            return self.reported
        if method is Method.TOKENIZER:
            return self.tokenizer
        return self.chars


@dataclass(frozen=True)
class TokenCount:
    value: int
    provenance: Provenance
    method: Method = Method.TOKENIZER

    def with_margin(self, margins: SafetyMargins) -> int:
        """The figure plus its safety margin, rounded up."""
        # Rounded before the ceiling so 100 x 1.02 is 102, not 103 through float error.
        return math.ceil(round(self.value * (1 + margins.for_method(self.method)), 6))


def fits(counts: Sequence[TokenCount], budget: int, margins: SafetyMargins | None = None) -> bool:
    """Whether the counts fit ``budget`` once each carries its safety margin."""
    chosen = margins or SafetyMargins()
    return sum(count.with_margin(chosen) for count in counts) <= budget


def message_digest(role: str, content: str, model_family: str) -> bytes:
    return content_digest("message", role, content, model_family)


def distribute(total: int, weights: Sequence[int]) -> list[int]:
    """Split ``total`` in proportion to ``weights`` so that the parts sum exactly to ``total``.

    Largest-remainder rounding; all-zero weights split evenly.
    """
    if not weights:
        return []
    weight_sum = sum(weights)
    if weight_sum <= 0:
        weights = [1] * len(weights)
        weight_sum = len(weights)
    raw = [total * w / weight_sum for w in weights]
    parts = [int(x) for x in raw]
    short = total - sum(parts)
    by_remainder = sorted(range(len(raw)), key=lambda i: (raw[i] - parts[i], -i), reverse=True)
    for i in by_remainder[:short]:
        parts[i] += 1
    return parts


@dataclass(frozen=True)
class MessageEstimate:
    digest: bytes
    estimate: int


class Calibrator:
    """Learns from reported totals and turns estimates into calibrated figures."""

    def __init__(self) -> None:
        self.factor = 1.0
        self.observations = 0
        self._shares: dict[bytes, int] = {}

    def observe(self, actual_total: int, messages: Sequence[MessageEstimate]) -> list[int]:
        """Record that these messages together were reported as ``actual_total`` tokens.

        Returns each message's calibrated share, which is also remembered by digest.
        """
        estimate_total = sum(m.estimate for m in messages)
        if estimate_total > 0 and actual_total > 0:
            ratio = actual_total / estimate_total
            self.factor = FACTOR_KEEP * self.factor + FACTOR_LEARN * ratio
            self.observations += 1
        shares = distribute(actual_total, [m.estimate for m in messages])
        for message, share in zip(messages, shares, strict=True):
            self._shares[message.digest] = share
        return shares

    def count(self, message: MessageEstimate) -> TokenCount:
        """The best figure for one message: its calibrated share, else the corrected estimate."""
        share = self._shares.get(message.digest)
        if share is not None:
            return TokenCount(share, Provenance.CALIBRATED, Method.TOKENIZER)
        return TokenCount(
            round(message.estimate * self.factor), Provenance.ESTIMATED, Method.TOKENIZER
        )

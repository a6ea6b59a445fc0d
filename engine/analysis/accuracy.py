"""How far ctxtop's estimate of a prompt was from what the API then reported.

For every request on the context, two estimates made *before* the request:

- ``estimated``: the tokenizer alone: the inferred system prefix plus every message's count;
- ``calibrated``: what the context gauge showed just before the request: the previous request's
  reported prompt and output (its answer's text instead when the output figure is a placeholder),
  plus the messages added since counted with the tokenizer, both corrected by the factor learnt
  from the requests up to the previous one (engine/sessions/tokenizer_factor.py).

The first request on the context is not scored: the system prefix is inferred from it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from ctxtop.engine.analysis.snapshot import Accuracy, AccuracyRow
from ctxtop.engine.sessions.sample import PLACEHOLDER_SHARE
from ctxtop.engine.sessions.tokenizer_factor import LEARNT_OVER, factor_from


@dataclass(frozen=True, slots=True)
class RequestPoint:
    """A request on the context: its reported prompt and output, the tokenizer count of the
    messages it carried (``message_tokens``) and of its own answer's messages."""

    response_id: str
    prompt: int
    output: int
    message_tokens: int
    answer_tokens: int


def _pct(estimate: int, actual: int) -> float:
    return round(100 * (estimate - actual) / actual, 2) if actual else 0.0


def accuracy(points: Sequence[RequestPoint], system: int, encoding: str) -> Accuracy:
    rows: list[AccuracyRow] = []
    start = 0
    for index, (previous, point) in enumerate(itertools.pairwise(points)):
        estimated = system + point.message_tokens
        # As the gauge had it: the factor from the requests up to the previous one, back until
        # the context grew by LEARNT_OVER tokens.
        while (
            start + 1 < index
            and previous.message_tokens - points[start + 1].message_tokens >= LEARNT_OVER
        ):
            start += 1
        first = points[start]
        factor = factor_from(
            previous.prompt - first.prompt, previous.message_tokens - first.message_tokens
        )
        # What came after the previous answer (tool results, a new prompt): only estimates.
        new_messages = point.message_tokens - previous.message_tokens - previous.answer_tokens
        answer = previous.output
        if previous.output < previous.answer_tokens * PLACEHOLDER_SHARE:
            answer = max(factor.apply(previous.answer_tokens), previous.output)
        calibrated = previous.prompt + answer + factor.apply(max(new_messages, 0))
        rows.append(
            AccuracyRow(
                response_id=point.response_id,
                reported=point.prompt,
                estimated=estimated,
                calibrated=calibrated,
                error_pct=_pct(estimated, point.prompt),
                calibrated_error_pct=_pct(calibrated, point.prompt),
            )
        )
    errors = [abs(row.error_pct) for row in rows]
    calibrated_errors = [abs(row.calibrated_error_pct or 0.0) for row in rows]
    return Accuracy(
        rows=tuple(rows),
        requests=len(rows),
        mean_abs_error_pct=round(sum(errors) / len(errors), 2) if errors else None,
        max_abs_error_pct=max(errors) if errors else None,
        calibrated_mean_abs_error_pct=(
            round(sum(calibrated_errors) / len(calibrated_errors), 2) if calibrated_errors else None
        ),
        encoding=encoding,
    )

"""How far ctxtop's estimate of a prompt was from what the API then reported.

For every request on the context, two estimates made *before* the request:

- ``estimated``: the tokenizer alone: the inferred system prefix plus every message's count;
- ``calibrated``: the previous request's reported prompt and output, plus the messages added
  since counted with the tokenizer and corrected by the calibration factor learnt from earlier
  requests (engine/tokens/calibration.py), which is what the context gauge shows between requests.

The first request on the context is not scored: the system prefix is inferred from it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from engine.analysis.snapshot import Accuracy, AccuracyRow
from engine.tokens.calibration import FACTOR_KEEP, FACTOR_LEARN


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
    factor = 1.0
    for previous, point in itertools.pairwise(points):
        estimated = system + point.message_tokens
        # What came after the previous answer (tool results, a new prompt): only estimates.
        new_messages = point.message_tokens - previous.message_tokens - previous.answer_tokens
        calibrated = previous.prompt + previous.output + round(max(new_messages, 0) * factor)
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
        # What the API said these new messages (and the previous answer) really cost.
        actual_new = point.prompt - previous.prompt - previous.output
        if new_messages > 0 and actual_new > 0:
            factor = FACTOR_KEEP * factor + FACTOR_LEARN * (actual_new / new_messages)
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

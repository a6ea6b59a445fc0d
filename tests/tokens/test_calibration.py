"""Estimates are reconciled to the API's reported totals; every figure says where it is from."""

from __future__ import annotations

from engine.tokens.calibration import (
    Calibrator,
    MessageEstimate,
    Method,
    Provenance,
    SafetyMargins,
    TokenCount,
    distribute,
    fits,
    message_digest,
)


def test_correction_factor_moves_30_percent_towards_each_observation() -> None:
    calibrator = Calibrator()
    a = MessageEstimate(message_digest("user", "a", "claude"), 100)
    calibrator.observe(120, [a])
    assert calibrator.factor == 0.7 * 1.0 + 0.3 * 1.2
    calibrator.observe(150, [a])
    assert abs(calibrator.factor - (0.7 * (0.7 + 0.36) + 0.3 * 1.5)) < 1e-12


def test_reported_total_is_shared_by_estimate_and_sums_exactly() -> None:
    parts = distribute(1001, [300, 200, 500])
    assert sum(parts) == 1001
    assert parts == [300, 200, 501] or parts == [301, 200, 500]
    assert distribute(7, [0, 0]) in ([4, 3], [3, 4])


def test_known_messages_are_calibrated_new_ones_estimated_with_the_factor() -> None:
    calibrator = Calibrator()
    seen = MessageEstimate(message_digest("user", "hello", "claude"), 40)
    other = MessageEstimate(message_digest("assistant", "hi", "claude"), 60)
    calibrator.observe(150, [seen, other])
    assert calibrator.count(seen) == TokenCount(60, Provenance.CALIBRATED)
    new = MessageEstimate(message_digest("user", "new text", "claude"), 100)
    result = calibrator.count(new)
    assert result.provenance is Provenance.ESTIMATED
    assert result.value == round(100 * (0.7 + 0.3 * 1.5))


def test_same_text_in_another_model_family_is_not_calibrated() -> None:
    calibrator = Calibrator()
    calibrator.observe(50, [MessageEstimate(message_digest("user", "x", "claude"), 10)])
    other_family = MessageEstimate(message_digest("user", "x", "gpt"), 10)
    assert calibrator.count(other_family).provenance is Provenance.ESTIMATED


def test_safety_margins_depend_on_how_a_figure_was_obtained() -> None:
    margins = SafetyMargins()
    assert TokenCount(100, Provenance.REPORTED, Method.API).with_margin(margins) == 102
    assert TokenCount(100, Provenance.ESTIMATED, Method.TOKENIZER).with_margin(margins) == 105
    assert TokenCount(100, Provenance.ESTIMATED, Method.CHARS).with_margin(margins) == 110
    assert fits([TokenCount(98, Provenance.REPORTED, Method.API)], 100)
    assert not fits([TokenCount(98, Provenance.ESTIMATED, Method.TOKENIZER)], 100)
    assert fits([TokenCount(98, Provenance.ESTIMATED)], 103, SafetyMargins(tokenizer=0.05))

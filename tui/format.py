"""Number formatting shared by the widgets (presentation only)."""

from __future__ import annotations

PROVENANCE_MARK = {
    "reported": "",
    "compaction": "",
    "calibrated": "~",
    "estimated": "≈",
    "inferred": "*",
}


def tokens(value: int | None) -> str:
    """12345 -> 12.3k, 1234567 -> 1.23M."""
    if value is None:
        return "?"
    if value >= 1_000_000:
        return f"{value / 1_000_000:.2f}M"
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return str(value)


def mark(source: str) -> str:
    """The provenance mark of a figure: none when reported, ~ calibrated, ≈ estimated,
    * inferred (what is left of a reported total after the parts the log shows)."""
    return PROVENANCE_MARK.get(source, "?")

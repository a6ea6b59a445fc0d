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


def clock_time(stamp: str) -> str:
    """The time of day of a log's ISO 8601 timestamp ("14:04:41 UTC"), else the stamp as is."""
    if len(stamp) >= 19 and stamp[10] == "T":
        utc = stamp.endswith(("Z", "+00:00"))
        return stamp[11:19] + (" UTC" if utc else "")
    return stamp[:32]

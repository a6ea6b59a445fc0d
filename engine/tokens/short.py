"""The one way a token count is written short, on the dashboard, the event log and the status
line: 12345 -> 12.3k, 1234567 -> 1.23M (``digits``: decimals of the thousands), and the mark
that says where a figure comes from."""

from __future__ import annotations


def short_tokens(value: float | None, digits: int = 1) -> str:
    """12345 -> 12.3k (``digits`` 0: 12k), 1234567 -> 1.23M, 12.4 (a mean) -> 12, -2500 ->
    -2.5k; None (not known) -> ?."""
    if value is None:
        return "?"
    size = abs(value)
    if size >= 1_000_000:
        return f"{value / 1_000_000:.2f}M"
    if size >= 1000:
        return f"{value / 1000:.{digits}f}k"
    return f"{value:.0f}"


PROVENANCE_MARK = {
    "reported": "",
    "compaction": "",
    "calibrated": "~",
    "estimated": "≈",
    "inferred": "*",
    "measured": "=",
    "logged": "≡",
}


def provenance_mark(source: str) -> str:
    """The provenance mark of a figure: none when reported, ~ calibrated, ≈ estimated,
    * inferred (what is left of a reported total after the parts the log shows), = measured
    (counted from the request itself, as ctxtop's proxy forwarded it), ≡ logged (counted from
    the request's text as the agent's log records it)."""
    return PROVENANCE_MARK.get(source, "?")

"""``LiveSession``: a session file followed incrementally, one ``LiveView`` per change."""

from __future__ import annotations

from pathlib import Path

from engine.config import Thresholds
from engine.live.categories import CategoryTotals
from engine.live.view import LiveView, build_view
from engine.sessions.reader import SessionReader
from engine.sessions.report import build_report, encoding_for


class LiveSession:
    """Reads only what was appended on each ``poll``; ``view()`` is the current sample."""

    def __init__(self, path: str | Path, thresholds: Thresholds | None = None) -> None:
        self.path = Path(path)
        self.reader = SessionReader(self.path)
        self.thresholds = thresholds or Thresholds()
        self.categories = CategoryTotals()

    def poll(self) -> bool:
        """Apply what was appended (all of it); True when the view may have changed."""
        changed = False
        while self.reader.poll():  # companions found on one poll are read by the next
            changed = True
        return changed

    def view(self) -> LiveView | None:
        """The current sample, or None while the file is empty or not a known format."""
        adapter = self.reader.adapter
        if adapter is None:
            return None
        state = adapter.snapshot()
        report = build_report(adapter)
        report["context_breakdown"] = self.categories.update(state, encoding_for(state))
        return build_view(report, state, self.thresholds)

    @property
    def error(self) -> str | None:
        return self.reader.error

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError:
            return 0

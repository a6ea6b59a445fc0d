"""The context gauge: fill bar with ctxtop's triggers, the agent's auto-compact point and the
reserved buffer above it; coloured by state (ok / warning / critical)."""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from engine.live.view import Gauge
from tui import format as fmt

# How the figure was come by, in the summary line.
SOURCE_WORDS = {"compaction": "after compaction"}


def _column(tokens: int, window: int, width: int) -> int:
    if window <= 0 or width <= 0:
        return 0
    return min(width - 1, max(0, round(tokens / window * width)))


class ContextGauge(Static):
    DEFAULT_CSS = """
    ContextGauge { height: 5; border: round $primary; padding: 0 1; }
    ContextGauge > .gauge--ok { color: $success; }
    ContextGauge > .gauge--warning { color: $warning; }
    ContextGauge > .gauge--critical { color: $error; }
    ContextGauge > .gauge--free { color: $foreground 30%; }
    ContextGauge > .gauge--reserved { color: $error 60%; }
    ContextGauge > .gauge--marker { color: $accent; }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "gauge--ok",
        "gauge--warning",
        "gauge--critical",
        "gauge--free",
        "gauge--reserved",
        "gauge--marker",
    }

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.border_title = "Context"
        self.gauge: Gauge | None = None

    def show(self, gauge: Gauge, profile: str | None = None) -> None:
        """``profile``: the layout profile whose auto-compact point is drawn, when it is not
        the agent's own."""
        self.gauge = gauge
        self.border_title = "Context" if profile is None else f"Context · {profile} profile"
        self.refresh()

    def render(self) -> Text:
        gauge = self.gauge
        if gauge is None:
            return Text("no figures yet")
        width = max(10, self.content_size.width)
        state_style = self.get_component_rich_style(f"gauge--{gauge.state}")
        summary = self._summary(gauge, state_style, width)
        bar = Text(no_wrap=True)
        used = min(width, round(gauge.fill * width))
        reserved_from = (
            _column(gauge.autocompact_at, gauge.window, width)
            if gauge.autocompact_at is not None
            else width
        )
        free_style = self.get_component_rich_style("gauge--free")
        reserved_style = self.get_component_rich_style("gauge--reserved")
        for cell in range(width):
            if cell < used:
                bar.append("█", style=state_style)
            elif cell >= reserved_from:
                bar.append("▒", style=reserved_style)
            else:
                bar.append("·", style=free_style)
        markers = [" "] * width
        markers[_column(gauge.editing_at, gauge.window, width)] = "E"
        markers[_column(gauge.compaction_at, gauge.window, width)] = "C"
        if gauge.autocompact_at is not None:
            markers[reserved_from] = "A"
        marker_line = Text("".join(markers), style=self.get_component_rich_style("gauge--marker"))
        return Text("\n", no_wrap=True).join([summary, bar, marker_line])

    def _summary(self, gauge: Gauge, state_style: Style, width: int) -> Text:
        """The figures' line, shortened to fit one line (a second one would push the marks
        out of the box): first "what-if window" becomes "what-if", then the source's words go
        (the figure's mark stays)."""
        for what_if, words in (("what-if window", True), ("what-if", True), ("what-if", False)):
            summary = Text(no_wrap=True, overflow="ellipsis")
            summary.append(f"{gauge.percent:.1f} %", style=state_style + Style(bold=True))
            summary.append(
                f"  {fmt.tokens(gauge.tokens)}{fmt.mark(gauge.source)} / {fmt.tokens(gauge.window)}"
            )
            if words:
                summary.append(f" ({SOURCE_WORDS.get(gauge.source, gauge.source)})")
            if gauge.window_source == "what-if":
                summary.append(f" {what_if}", style="bold reverse")
            if gauge.to_autocompact is not None:
                summary.append(f" · {fmt.tokens(gauge.to_autocompact)} to auto-compact")
            if gauge.window_note is not None:
                summary.append(f" · {gauge.window_note}", style="bold")
            if summary.cell_len <= width:
                break
        return summary

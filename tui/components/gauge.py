"""The context gauge: fill bar with ctxtop's triggers, the agent's auto-compact point and the
reserved buffer above it; coloured by state (ok / warning / critical). Its bottom border holds
the prompt cache's clock, ticking each second (engine/sessions/cache_clock.py)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, tzinfo
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from ctxtop.engine.live.view import Gauge
from ctxtop.engine.models.window import WHAT_IF
from ctxtop.engine.sessions.cache_clock import CachedPrefix, cache_clock, state_text, usd
from ctxtop.tui import format as fmt

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

    def __init__(self, clock: Callable[[], datetime] = datetime.now, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.border_title = "Context"
        self.gauge: Gauge | None = None
        self.clock = clock  # the app's (a frozen one in tests)
        self.warm: CachedPrefix | None = None
        self.model: str | None = None

    def on_mount(self) -> None:
        self.set_interval(1.0, self.tick_cache)

    def show_cache(self, warm: CachedPrefix | None, model: str | None) -> None:
        """The prefix the cache holds after the last request (the analysis's), for the clock."""
        self.warm, self.model = warm, model
        self.tick_cache()

    def tick_cache(self) -> None:
        now = self.clock()
        self.border_subtitle = cache_words(self.warm, self.model, now.timestamp(), now.tzinfo)

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
            if gauge.window_source == WHAT_IF:
                summary.append(f" {what_if}", style="bold reverse")
            if gauge.to_autocompact is not None:
                summary.append(f" · {fmt.tokens(gauge.to_autocompact)} to auto-compact")
            if gauge.window_note is not None:
                summary.append(f" · {gauge.window_note}", style="bold")
            if summary.cell_len <= width:
                break
        return summary


def cache_words(
    warm: CachedPrefix | None, model: str | None, now: float, tz: tzinfo | None = None
) -> str:
    """``cache warm 3:12 · next $0.004 now, $0.085 after expiry*``: the clock and what the next
    request pays for the cached prefix (ctxtop's estimate from the log: ``*``)."""
    clock = cache_clock(warm, now, model)
    if clock is None:
        return ""
    words = state_text(clock, now, tz)
    if clock.rewrite_cost is None:
        return words
    mark = fmt.mark("inferred")
    if clock.warm:
        cost = f"next {usd(clock.read_cost)} now, {usd(clock.rewrite_cost)} after expiry"
    else:
        cost = f"next {usd(clock.rewrite_cost)} ({fmt.tokens(clock.prefix_tokens)} written again)"
    return f"{words} · {cost}{mark}"

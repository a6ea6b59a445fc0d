"""Fill per request: a sparkline of the context size of every request so far, and the forecast
of requests left before the agent compacts on its own."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Sparkline, Static

from engine.analysis.snapshot import Forecast
from engine.live.view import LiveView
from tui import format as fmt


class FillHistory(Vertical):
    DEFAULT_CSS = """
    FillHistory { height: 5; border: round $primary; padding: 0 1; }
    FillHistory > Sparkline { height: 2; }
    FillHistory > Static { height: 1; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.border_title = "Fill per request"
        # Kept by reference: an update may come while the app tears its widgets down.
        self.sparkline = Sparkline([], id="history-sparkline")
        self.caption = Static("no requests yet", id="history-caption")

    def compose(self) -> ComposeResult:
        yield self.sparkline
        yield self.caption

    def show(self, view: LiveView) -> None:
        history = list(view.history)
        self.sparkline.data = history
        forecast = view.analysis.forecast if view.analysis is not None else None
        caption = Text(no_wrap=True, overflow="ellipsis")
        if forecast is not None:
            caption.append(forecast_text(forecast), style="bold")
            caption.append(" · ")
        if not history:
            caption.append("no requests yet")
        else:
            caption.append(
                f"{len(history)} requests · peak {fmt.tokens(max(history))}"
                f" · {view.compactions} compactions"
            )
            last = view.last_request
            if last is not None:
                caption.append(
                    f" · last prompt {fmt.tokens(last.prompt)} (cache read"
                    f" {fmt.tokens(last.cache_read)}, write {fmt.tokens(last.cache_write)})"
                    f" + output {fmt.tokens(last.output)}"
                )
        self.caption.update(caption)


def forecast_text(forecast: Forecast) -> str:
    """ "~N requests left (low–high)" before auto-compaction, or why there is no forecast."""
    if forecast.requests_left is None:
        return f"no forecast ({forecast.basis})"
    low = "?" if forecast.low is None else f"{forecast.low:.0f}"
    high = "?" if forecast.high is None else f"{forecast.high:.0f}"
    return f"~{forecast.requests_left:.0f} requests left ({low}–{high})"

"""Fill per request: a sparkline (from zero) of the context size of every request so far, the
forecast of requests left before the agent compacts on its own, and the last request's figures."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from ctxtop.engine.analysis.forecast import forecast_text
from ctxtop.engine.live.view import LiveView
from ctxtop.tui import format as fmt

BARS = "▁▂▃▄▅▆▇█"


class FillSparkline(Widget):
    """The context of each request as a bar from zero to the peak (a sparkline from the
    lowest value would draw 22k against 24k as nothing against everything). Many requests
    share a cell: the largest is drawn; few are stretched over several."""

    DEFAULT_CSS = """
    FillSparkline { height: 1; color: $primary; }
    """

    data: reactive[tuple[int, ...]] = reactive(())

    def render(self) -> Text:
        data, width = self.data, self.content_size.width
        if not data or width <= 0:
            return Text()
        peak = max(data)
        cells = []
        for cell in range(width):
            start = cell * len(data) // width
            end = max(start + 1, (cell + 1) * len(data) // width)
            value = max(data[start:end])
            level = round(value / peak * len(BARS)) if peak > 0 else 0
            cells.append(BARS[min(level, len(BARS)) - 1] if value > 0 else " ")
        return Text("".join(cells))


class FillHistory(Vertical):
    DEFAULT_CSS = """
    FillHistory { height: auto; border: round $primary; padding: 0 1; }
    FillHistory > Static { height: auto; max-height: 3; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.border_title = "Fill per request"
        # Kept by reference: an update may come while the app tears its widgets down.
        self.sparkline = FillSparkline(id="history-sparkline")
        self.caption = Static("no requests yet", id="history-caption")

    def compose(self) -> ComposeResult:
        yield self.sparkline
        yield self.caption

    def show(self, view: LiveView) -> None:
        history = list(view.history)
        self.sparkline.data = tuple(history)
        forecast = view.analysis.forecast if view.analysis is not None else None
        caption = Text()
        if forecast is not None:
            said = forecast_text(forecast)
            if not view.compactions:  # no compaction yet: nothing to count "since"
                said = said.replace(" since the last compaction", "")
            caption.append(said, style="bold")
            caption.append("\n")
        if not history:
            caption.append("no requests yet")
        else:
            caption.append(
                f"{fmt.plural(len(history), 'request')} · peak {fmt.tokens(max(history))}"
                f" · {fmt.plural(view.compactions, 'compaction')}"
            )
            last = view.last_request
            if last is not None:
                caption.append(
                    f" · last: {fmt.tokens(last.prompt)} in ({fmt.tokens(last.cache_read)} from"
                    f" cache, {fmt.tokens(last.cache_write)} written) + {fmt.tokens(last.output)}"
                    " out"
                )
        self.caption.update(caption)

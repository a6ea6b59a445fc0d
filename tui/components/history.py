"""Fill per request: a sparkline of the context size of every request so far, the forecast of
requests left before the agent compacts on its own, and the last request's figures."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Sparkline, Static

from engine.analysis.forecast import forecast_text
from engine.live.view import LiveView
from tui import format as fmt


class FillHistory(Vertical):
    DEFAULT_CSS = """
    FillHistory { height: auto; border: round $primary; padding: 0 1; }
    FillHistory > Sparkline { height: 1; }
    FillHistory > Static { height: auto; max-height: 3; }
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

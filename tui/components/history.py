"""Fill per request: a sparkline of the context size of every request so far."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Sparkline, Static

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

    def compose(self) -> ComposeResult:
        yield Sparkline([], id="history-sparkline")
        yield Static("no requests yet", id="history-caption")

    def show(self, view: LiveView) -> None:
        history = list(view.history)
        self.query_one(Sparkline).data = history
        if not history:
            caption = "no requests yet"
        else:
            caption = (
                f"{len(history)} requests · peak {fmt.tokens(max(history))}"
                f" · {view.compactions} compactions"
            )
            last = view.last_request
            if last is not None:
                caption += (
                    f" · last prompt {fmt.tokens(last.prompt)} (cache read"
                    f" {fmt.tokens(last.cache_read)}, write {fmt.tokens(last.cache_write)})"
                    f" + output {fmt.tokens(last.output)}"
                )
        self.query_one("#history-caption", Static).update(caption)

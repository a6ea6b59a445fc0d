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
                f"{len(history)} requests · last {fmt.tokens(history[-1])}"
                f" · peak {fmt.tokens(max(history))} · {view.compactions} compactions"
            )
        self.query_one("#history-caption", Static).update(caption)

"""Event log: compactions seen in the log and lines the reader had to skip."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from engine.live.view import Event


class EventLog(DataTable[Text]):
    DEFAULT_CSS = """
    EventLog { border: round $primary; height: 1fr; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(cursor_type="row", **kwargs)  # type: ignore[arg-type]
        self.border_title = "Events"
        self.events: tuple[Event, ...] = ()

    def on_mount(self) -> None:
        self.add_column("line", key="line")
        self.add_column("event", key="event")

    def show(self, events: tuple[Event, ...]) -> None:
        if events == self.events:
            return
        self.events = events
        self.clear()
        for event in events:
            style = "bold" if event.kind == "compaction" else "dim"
            self.add_row(
                Text(str(event.line), justify="right"),
                Text(event.text, style=style),  # reasons quote log content: plain text
            )
        if events:
            self.move_cursor(row=len(events) - 1)

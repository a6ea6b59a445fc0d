"""Event log: compactions and truncations seen in the log, lines the reader had to skip, and what
ctxtop did to the session (edit, compact, undo: from its action log)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from engine.live.view import Event
from tui import format as fmt

STYLES = {"compaction": "bold", "truncation": "", "action": "italic", "skipped": "dim"}


class EventLog(DataTable[Text]):
    DEFAULT_CSS = """
    EventLog { border: round $primary; height: 1fr; overflow-x: hidden; }
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
            # An action is not a line of the log: when it happened instead.
            where = str(event.line) if event.line else fmt.clock_time(event.timestamp or "")[:8]
            style = STYLES.get(event.kind, "")
            self.add_row(
                Text(where, justify="right"),
                fmt.plain(event.text, style),  # reasons quote log content: plain text
            )
        if events:
            self.move_cursor(row=len(events) - 1)

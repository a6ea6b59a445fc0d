"""Event log: compactions and truncations seen in the log, lines the reader had to skip, and what
ctxtop did to the session (edit, compact, undo: from its action log).

An event's text wraps in its column (the panel is 30 columns wide at 80x24): each row is as
tall as its text, measured when it is added.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text
from textual import events
from textual.message import Message
from textual.widgets import DataTable

from ctxtop.engine.live.view import Event
from ctxtop.tui import format as fmt
from ctxtop.tui.components.fit import fit_columns

OPENS = ("compaction", "microcompaction")  # rows ``enter`` opens the compaction view of
STYLES = {
    "compaction": "bold",
    "microcompaction": "bold",
    "truncation": "",
    "action": "italic",
    "skipped": "dim",
}
MIN_TEXT = 12  # the event column never narrower than this
_MEASURE = Console(width=200, color_system=None)  # only measures wrapped heights


class EventLog(DataTable[Text]):
    DEFAULT_CSS = """
    EventLog { border: round $primary; height: 1fr; overflow-x: hidden; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(cursor_type="row", **kwargs)  # type: ignore[arg-type]
        self.border_title = "Events"
        self.events: tuple[Event, ...] = ()
        self._text_width = 0  # the event column's width the rows were wrapped to

    class CompactionChosen(Message):
        """``enter`` on a compaction's row: open what it kept and dropped."""

        def __init__(self, line: int) -> None:
            super().__init__()
            self.line = line

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        row = event.cursor_row
        if 0 <= row < len(self.events) and self.events[row].kind in OPENS:
            self.post_message(self.CompactionChosen(self.events[row].line))

    def on_mount(self) -> None:
        self.add_column("line", key="line")
        self.add_column("event", key="event")

    def on_resize(self, event: events.Resize) -> None:
        if self._width_for(self.events) != self._text_width:
            self._fill(self.events)

    def show(self, events: tuple[Event, ...]) -> None:
        if events == self.events:
            return
        self.events = events
        self._fill(events)

    @staticmethod
    def _where(event: Event) -> str:
        # Line numbers only: an action is not a line of the log (its text says when).
        return str(event.line) if event.line else ""

    @staticmethod
    def _text(event: Event) -> Text:
        text = fmt.plain(event.text, STYLES.get(event.kind, ""))  # log content: plain
        if not event.line and event.timestamp:
            moment = fmt.log_time(event.timestamp)  # in local time, as the header's clock
            when = moment.astimezone() if moment is not None else None
            text = Text.assemble(
                when.strftime("%H:%M:%S ") if when else f"{fmt.clock_time(event.timestamp)} ",
                text,
            )
        return text

    def _width_for(self, events: tuple[Event, ...]) -> int:
        """What is left of the panel for the text: the line column, two cells of padding on
        each column and a scrollbar's column are not."""
        where = max([len("line"), *(len(self._where(event)) for event in events)])
        padding = 2 * self.cell_padding
        return max(MIN_TEXT, self.scrollable_content_region.width - where - 2 * padding - 1)

    def _fill(self, events: tuple[Event, ...]) -> None:
        width = self._text_width = self._width_for(events)
        self.clear()
        for event in events:
            text = self._text(event)
            height = len(text.wrap(_MEASURE, width))
            self.add_row(Text(self._where(event), justify="right"), text, height=height)
        fit_columns(self, {"event": width})
        if events:
            self.move_cursor(row=len(events) - 1)

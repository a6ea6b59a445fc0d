"""Sub-agents: each one's requests and own context (shown when the terminal has room)."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.widgets import DataTable

from ctxtop.engine.live.view import SubagentRow
from ctxtop.tui import format as fmt
from ctxtop.tui.components.fit import ellipsis, fit_columns


class SubagentsTable(DataTable[Text]):
    DEFAULT_CSS = """
    SubagentsTable { border: round $primary; height: 1fr; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(cursor_type="row", **kwargs)  # type: ignore[arg-type]
        self.border_title = "Sub-agents"
        self.rows_shown: tuple[SubagentRow, ...] = ()

    def on_resize(self, event: events.Resize) -> None:
        fit_columns(self, flexible="name")

    def on_mount(self) -> None:
        self.add_column("agent", key="name")  # narrow at 80x24: the title says sub-agents
        self.add_column("requests", key="requests")
        self.add_column("context", key="context")

    def show(self, rows: tuple[SubagentRow, ...]) -> None:
        if rows == self.rows_shown:
            return
        self.rows_shown = rows
        self.clear()
        for row in rows:
            self.add_row(
                ellipsis(fmt.plain(row.name, limit=40)),  # a description from the log: plain text
                Text(str(row.requests), justify="right"),
                Text(f"{fmt.tokens(row.tokens)}{fmt.mark(row.source)}", justify="right"),
            )
        fit_columns(self, flexible="name")

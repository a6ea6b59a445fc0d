"""Tools: calls, result tokens and share per tool, sortable (``s``: the next sort column)."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.widgets import DataTable

from ctxtop.engine.live.view import ToolRow
from ctxtop.tui import format as fmt
from ctxtop.tui.components.fit import ellipsis, fit_columns

SORTS = ("tokens", "calls", "name")
NAME_WIDTH = 32  # an MCP tool name (mcp__server__tool) fits


def sort_rows(rows: tuple[ToolRow, ...], key: str) -> list[ToolRow]:
    if key == "name":
        return sorted(rows, key=lambda row: row.name)
    if key == "calls":
        return sorted(rows, key=lambda row: (-row.calls, row.name))
    return sorted(rows, key=lambda row: (-row.tokens, row.name))


class ToolsTable(DataTable[Text]):
    DEFAULT_CSS = """
    ToolsTable { border: round $primary; height: 1fr; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)  # type: ignore[arg-type]
        self.border_title = "Tools"
        self.sort_key = SORTS[0]
        self.border_subtitle = f"by {self.sort_key}"
        self.rows_shown: tuple[ToolRow, ...] = ()

    def on_resize(self, event: events.Resize) -> None:
        fit_columns(self, flexible="name")

    def on_mount(self) -> None:
        self.add_column("tool", key="name")
        self.add_column("calls", key="calls")
        self.add_column("tokens", key="tokens")
        self.add_column("share", key="share")

    def cycle_sort(self) -> str:
        self.sort_key = SORTS[(SORTS.index(self.sort_key) + 1) % len(SORTS)]
        self.show(self.rows_shown, force=True)
        return self.sort_key

    def show(self, rows: tuple[ToolRow, ...], force: bool = False) -> None:
        if rows == self.rows_shown and not force:
            return
        self.rows_shown = rows
        self.border_subtitle = f"by {self.sort_key}"
        self.clear()
        for row in sort_rows(rows, self.sort_key):
            self.add_row(
                # A tool name from the log: never markup, controls shown, the figures in view.
                ellipsis(fmt.plain(row.name, limit=NAME_WIDTH)),
                Text(str(row.calls), justify="right"),
                # Tokenizer counts of the results: estimates, marked so.
                Text(f"{fmt.tokens(row.tokens)}{fmt.mark('estimated')}", justify="right"),
                Text(fmt.share(row.share), justify="right"),
                key=row.name,
            )
        fit_columns(self, flexible="name")

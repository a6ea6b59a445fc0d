"""What the context holds, by kind of content, as bars (tokenizer estimates, marked so)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ctxtop.engine.live.view import CategoryRow
from ctxtop.tui import format as fmt

NAME_WIDTH = 15
FIGURE_WIDTH = 8


class ContextCategories(Static):
    DEFAULT_CSS = """
    ContextCategories { border: round $primary; height: 1fr; padding: 0 1; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.border_title = "Context by kind"
        self.rows: tuple[CategoryRow, ...] = ()

    def show(self, rows: tuple[CategoryRow, ...]) -> None:
        if rows != self.rows:
            self.rows = rows
            self.refresh()

    def render(self) -> Text:
        if not self.rows:
            return Text("nothing counted yet")
        width = max(1, self.content_size.width - NAME_WIDTH - FIGURE_WIDTH - 2)
        top = max(row.tokens for row in self.rows) or 1
        lines = []
        for row in self.rows:
            line = Text(no_wrap=True, overflow="ellipsis")
            line.append(f"{row.name[:NAME_WIDTH]:<{NAME_WIDTH}} ")
            line.append("█" * max(1, round(row.tokens / top * width)) if row.tokens else "")
            line.pad_right(NAME_WIDTH + 1 + width - line.cell_len)
            figure = f"{fmt.tokens(row.tokens)}{fmt.mark(row.source)}"
            line.append(f" {figure:>{FIGURE_WIDTH}}")
            lines.append(line)
        return Text("\n", no_wrap=True, overflow="ellipsis").join(lines)

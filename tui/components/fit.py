"""Column widths set when the rows are, so a table is never drawn with its previous widths.

Textual's ``DataTable`` measures new rows when the app is next idle; a frame drawn before that
(a busy machine, a snapshot) shows the new rows in the old columns, cut. Here each column gets
its width from the cells at once (or the width given), and stays so until the next update.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import DataTable

MIN_FLEXIBLE = 6  # a flexible column keeps a few letters of each name


def cell_width(cell: object) -> int:
    return cell.cell_len if isinstance(cell, Text) else len(str(cell))


def ellipsis(text: Text) -> Text:
    """A cell that ends in "…" when its column is narrower, never wrapped."""
    text.no_wrap, text.overflow = True, "ellipsis"
    return text


def fit_columns(
    table: DataTable[Any], given: dict[str, int] | None = None, flexible: str | None = None
) -> None:
    """Each column as wide as its label and its widest cell, or as ``given`` by column key;
    the ``flexible`` column gives up what the others need to fit in the table (its cells end
    in "…")."""
    given = given or {}
    for key, column in table.columns.items():
        width = given.get(str(key.value))
        if width is None:
            cells = [cell_width(cell) for cell in table.get_column(key)]
            width = max([column.label.cell_len, *cells])
        column.width, column.auto_width = width, False
    room = table.scrollable_content_region.width - 1  # a scrollbar may take one column
    total = sum(column.get_render_width(table) for column in table.columns.values())
    if flexible is not None and room > 0 and total > room:
        column = next(c for key, c in table.columns.items() if key.value == flexible)
        column.width = max(MIN_FLEXIBLE, column.width - (total - room))
    table.refresh(layout=True)

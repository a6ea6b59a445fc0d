"""Column widths set when the rows are, so a table is never drawn with its previous widths.

Textual's ``DataTable`` measures new rows when the app is next idle; a frame drawn before that
(a busy machine, a snapshot) shows the new rows in the old columns, cut. Here each column gets
its width from the cells at once (or the width given), and stays so until the next update.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import DataTable


def cell_width(cell: object) -> int:
    return cell.cell_len if isinstance(cell, Text) else len(str(cell))


def fit_columns(table: DataTable[Any], given: dict[str, int] | None = None) -> None:
    """Each column as wide as its label and its widest cell, or as ``given`` by column key."""
    given = given or {}
    for key, column in table.columns.items():
        width = given.get(str(key.value))
        if width is None:
            cells = [cell_width(cell) for cell in table.get_column(key)]
            width = max([column.label.cell_len, *cells])
        column.width, column.auto_width = width, False
    table.refresh(layout=True)

"""The sessions screen: every agent session active lately in one table, kept live ("top").

The rows come from the engine (``engine/live/sessions_table.py``, kept current by
``engine/live/sessions_watch.py`` in a worker thread); their cells, order, filter and folding
from ``engine/live/sessions_text.py``. This screen only lays them out and colours them.
Keys: enter opens the session in the dashboard, esc goes back to it, typing (or ``/``) filters,
``s`` sorts by the next column (``S`` the one before), ``r`` reverses, space folds or unfolds a
session's sub-agents, ``?`` lists these keys and what the columns say.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from ctxtop.engine.config import Thresholds
from ctxtop.engine.live.sessions_row import COMPACTING, ENDED, IDLE, WAITING, WORKING, SessionRow
from ctxtop.engine.live.sessions_table import SessionsTable
from ctxtop.engine.live.sessions_text import (
    COLUMN_KEYS,
    COLUMNS,
    DEFAULT_SORT,
    DESCENDING_FIRST,
    cells,
    column_widths,
    filter_rows,
    fit,
    flatten,
    level,
    sort_rows,
)
from ctxtop.engine.live.sessions_watch import watch_rows

STATE_STYLE = {
    WORKING: "success",
    WAITING: "warning",
    COMPACTING: "error",
    IDLE: "foreground-muted",
    ENDED: "foreground-muted",
}
LEVEL_STYLE = {"ok": "success", "warning": "warning", "critical": "error"}
ARROW = {True: "▼", False: "▲"}


# What ``?`` says of the keys (the footer's words are short) and of the table.
KEY_TITLES = {
    "open": "Open the selected session (a sub-agent: its parent)",
    "back": "Back to the dashboard (first clears the filter)",
    "filter": "Filter the rows (or just type a letter)",
    "sort(1)": "Sort by the next column",
    "sort(-1)": "Sort by the column before (or click a column's title)",
    "reverse": "Reverse the order (fill, largest first, by default)",
    "fold": "Fold or unfold the selected session's sub-agents",
    "help": "These keys",
}
LEGEND = """
Columns
  fill: share of the window (~ calibrated, ≈ estimated); green,
    yellow past the editing trigger, red past the compaction one
  growth: tokens added per request
  left: requests before the agent compacts
  cost: so far (- when the model's prices are unknown)
  last: when the agent last wrote
  Below 120 columns the table leaves out model, growth and cost.
State
  working: the model owes a response   waiting: for the user
  compacting: the agent is compacting
  idle: nothing written for 5 minutes
  ended: the file was deleted (the row goes a minute later)
Sub-agents
  folded under their parent: ▸ folded, ▾ unfolded (space)
"""


class RowsUpdated(Message):
    def __init__(self, rows: tuple[SessionRow, ...], settled: bool) -> None:
        super().__init__()
        self.rows = rows
        self.settled = settled  # every row read, the shown ones in full


class SessionsScreen(Screen[None]):
    DEFAULT_CSS = """
    SessionsScreen #sessions-title { height: 1; padding: 0 1; background: $panel; }
    SessionsScreen #sessions-table { height: 1fr; }
    SessionsScreen #sessions-filter { display: none; height: 1; border: none; padding: 0 1; }
    SessionsScreen #sessions-filter.shown { display: block; }
    """
    AUTO_FOCUS = "#sessions-table"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open"),
        Binding("escape", "back", "Dashboard"),
        Binding("slash", "filter", "Filter"),
        Binding("s", "sort(1)", "Sort"),
        Binding("S", "sort(-1)", "Sort back", show=False),
        Binding("r", "reverse", "Reverse", show=False),
        Binding("space", "fold", "Sub-agents"),
        Binding("a", "back", "Dashboard", show=False),
        # The app's keys, here for the footer's order (the dashboard's: q, then ?); ? gives
        # this table's keys, not the dashboard's.
        Binding("q", "app.quit", "Quit"),
        Binding("question_mark", "help", "Help"),
    ]

    def __init__(
        self,
        table: SessionsTable,
        open_session: Callable[[Path], None],
        *,
        use_watchfiles: bool = True,
        thresholds: Thresholds | None = None,
    ) -> None:
        super().__init__(id="sessions")
        self.table = table
        self.open_session = open_session
        self.use_watchfiles = use_watchfiles
        self.thresholds = thresholds or Thresholds()
        self.rows: tuple[SessionRow, ...] = ()
        self.loaded = False
        self.settled = False  # see ``RowsUpdated``
        self.sort_by = DEFAULT_SORT
        self.descending = True
        self.unfolded: set[str] = set()
        self.stop = threading.Event()
        # What the table holds now: its columns (key, width, sorted, descending) and rows.
        self._heads: tuple[tuple[str, int, bool, bool], ...] = ()
        self._drawn: dict[str, list[Text]] = {}
        self._built: dict[str, tuple[list[tuple[str, str]], list[Text]]] = {}

    def compose(self) -> ComposeResult:
        yield Static("", id="sessions-title")
        grid: DataTable[Text] = DataTable(id="sessions-table", cursor_type="row", cell_padding=0)
        yield grid
        hint = "filter: type to narrow, enter: keep, esc: clear"
        yield Input(placeholder=hint, id="sessions-filter", select_on_focus=False)
        yield Footer(compact=True)

    @property
    def grid(self) -> DataTable[Text]:
        return self.query_one("#sessions-table", DataTable)

    @property
    def filter_input(self) -> Input:
        return self.query_one("#sessions-filter", Input)

    def on_mount(self) -> None:
        self.follow()
        self.render_rows()

    def on_unmount(self) -> None:
        self.stop.set()

    @work(thread=True, exclusive=True, group="sessions")
    def follow(self) -> None:
        """Keep the table current (a worker thread: reading and figures never block the UI)."""
        for rows in watch_rows(self.table, self.stop, use_watchfiles=self.use_watchfiles):
            self.post_message(RowsUpdated(rows, settled=not self.table.pending()))

    def on_rows_updated(self, message: RowsUpdated) -> None:
        self.rows = message.rows
        self.loaded = True
        self.settled = message.settled
        self.render_rows()

    def on_resize(self, event: events.Resize) -> None:
        self.render_rows()

    # -- drawing ---------------------------------------------------------------------------

    def shown(self) -> list[tuple[SessionRow, int]]:
        """The rows on screen, in order, with their depth (1: a sub-agent)."""
        ordered = sort_rows(self.rows, self.sort_by, self.descending)
        return flatten(filter_rows(ordered, self.filter_input.value), self.unfolded)

    def _widths(self) -> dict[str, int]:
        return column_widths(self.size.width - 2, self.size.width)  # less the scrollbar's cells

    def render_rows(self) -> None:
        """Draw the rows, changing only what changed: rows added or gone, changed cells, the
        order (an append changes one row's figures; rebuilding 50 rows costs far more)."""
        if not self.is_mounted:
            return
        grid = self.grid
        widths = self._widths()
        heads = tuple((key, width, key == self.sort_by, self.descending) for key, width in
                      widths.items())  # fmt: skip
        if heads != self._heads:
            self._heads, self._drawn, self._built = heads, {}, {}
            grid.clear(columns=True)
            for column in COLUMNS:
                if column.key in widths:
                    arrow = ARROW[self.descending] if column.key == self.sort_by else ""
                    title = fit(column, f"{column.title}{arrow}", widths[column.key])
                    grid.add_column(Text(" " + title), key=column.key)
        now = self.table.clock()
        rows = {row.key: self._texts(row, depth, now, widths) for row, depth in self.shown()}
        selected = self._selected_key()
        order = [key for key in self._drawn if key in rows]
        for key in self._drawn.keys() - rows.keys():
            grid.remove_row(key)
        columns = list(grid.columns)
        for key, texts in rows.items():
            old = self._drawn.get(key)
            if old is None:
                grid.add_row(*texts, key=key)
                order.append(key)
            elif old is not texts:
                for column_key, was, now_text in zip(columns, old, texts, strict=True):
                    if was is not now_text:
                        grid.update_cell(key, column_key, now_text, update_width=False)
        if order != list(rows):
            place = {id(texts[0]): index for index, texts in enumerate(rows.values())}
            grid.sort(key=lambda values: place[id(values[0])])
        self._drawn = rows
        self._built = {key: self._built[key] for key in rows}
        if selected is not None and selected in rows:
            index = grid.get_row_index(selected)
            if index != grid.cursor_row:
                grid.move_cursor(row=index)
        self._title()
        self._tell_shown()

    def _tell_shown(self) -> None:
        """Tell the table which rows are on screen (and the selected one): theirs are the
        figures read in full."""
        grid = self.grid
        keys = [str(row.key.value) for row in grid.ordered_rows]
        top = int(grid.scroll_offset.y)
        shown = keys[top : top + max(grid.size.height, 1)]
        if 0 <= grid.cursor_row < len(keys):
            shown.append(keys[grid.cursor_row])
        self.table.show(shown)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._tell_shown()

    def _texts(self, row: SessionRow, depth: int, now: float, widths: dict[str, int]) -> list[Text]:
        """The row's cells, the same objects as last time for the cells whose text is the same
        (building rich Texts is most of a redraw's cost)."""
        text = cells(row, now, depth, folded=row.key not in self.unfolded)
        styles = self._styles(row)
        plain = [(text[key], styles.get(key, "")) for key in widths]
        built = self._built.get(row.key)
        if built is not None and built[0] == plain:
            return built[1]
        old = built[1] if built is not None else None
        texts = []
        for index, (key, (value, style)) in enumerate(zip(widths, plain, strict=True)):
            if built is not None and old is not None and built[0][index] == (value, style):
                texts.append(old[index])
                continue
            column = COLUMNS[COLUMN_KEYS.index(key)]
            texts.append(Text(" " + fit(column, value, widths[key]), style=style))
        self._built[row.key] = (plain, texts)
        return texts

    def _styles(self, row: SessionRow) -> dict[str, str]:
        colours = self.app.theme_variables
        return {
            "fill": colours.get(LEVEL_STYLE[level(row, self.thresholds)], ""),
            "state": colours.get(STATE_STYLE.get(row.state, ""), ""),
        }

    def _title(self) -> None:
        sessions = len(self.rows)
        minutes = self.table.active_seconds / 60
        order = f"sorted by {self.sort_by} {ARROW[self.descending]}"
        typed = self.filter_input.value
        if not self.loaded:
            head = "reading the sessions…"
        else:
            plural = "" if sessions == 1 else "s"
            head = f"{sessions} session{plural} active in the last {minutes:g} min"
        parts = [head, order] + ([f"filter: {typed}"] if typed else [])
        self.query_one("#sessions-title", Static).update(Text(" · ".join(parts)))

    def _selected_key(self) -> str | None:
        grid = self.grid
        if not grid.row_count:
            return None
        try:
            key = grid.coordinate_to_cell_key(grid.cursor_coordinate).row_key
        except Exception:
            return None
        return key.value

    # -- keys ------------------------------------------------------------------------------

    def action_open(self) -> None:
        key = self._selected_key()
        if key is None:
            return
        self.open_session(Path(key.split("#", 1)[0]))  # a sub-agent: its parent's dashboard

    def action_back(self) -> None:
        if self.filter_input.value or self.focused is self.filter_input:
            self._set_filter("")
            return
        if getattr(self.app, "path", None) is None:
            self.notify("No session open yet: enter opens the selected one.")
            return
        self.dismiss()

    def action_help(self) -> None:
        from ctxtop.tui.screens.help import HelpScreen, binding_keys

        keys = binding_keys(self.BINDINGS, KEY_TITLES)
        keys.append(("ctrl+p", "Command palette: every action by name"))
        self.app.push_screen(HelpScreen(keys, "Sessions table keys", LEGEND))

    def action_filter(self) -> None:
        field = self.filter_input
        field.add_class("shown")
        field.focus()

    def action_sort(self, step: int) -> None:
        index = (COLUMN_KEYS.index(self.sort_by) + step) % len(COLUMN_KEYS)
        self.sort_by = COLUMN_KEYS[index]
        self.descending = self.sort_by in DESCENDING_FIRST
        self.render_rows()

    def action_reverse(self) -> None:
        self.descending = not self.descending
        self.render_rows()

    def action_fold(self) -> None:
        key = self._selected_key()
        if key is None:
            return
        parent = key.split("#", 1)[0]
        self.unfolded.symmetric_difference_update({parent})
        self.render_rows()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        key = str(event.column_key.value)
        if key == self.sort_by:
            self.descending = not self.descending
        else:
            self.sort_by, self.descending = key, key in DESCENDING_FIRST
        self.render_rows()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    def on_key(self, event: events.Key) -> None:
        """A printable key that is no key of this screen starts the filter with it."""
        char = event.character
        if self.focused is not self.grid or not char or not char.isprintable() or char == " ":
            return
        if char in "/sSra" or event.key in ("q", "question_mark"):
            return
        event.stop()
        event.prevent_default()
        field = self.filter_input
        field.add_class("shown")
        field.focus()
        field.value += char
        field.cursor_position = len(field.value)

    def on_input_changed(self, event: Input.Changed) -> None:
        self.render_rows()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if not event.value:
            self.filter_input.remove_class("shown")
        self.grid.focus()

    def _set_filter(self, text: str) -> None:
        field = self.filter_input
        field.value = text
        field.set_class(bool(text), "shown")
        self.grid.focus()
        self.render_rows()


def sessions_screen(app: Any) -> SessionsScreen:
    """The screen for ``app`` (a ``CtxtopApp``): its settings, agent and clock."""
    settings = app.settings
    table = SessionsTable(
        active_minutes=settings.active_minutes,
        agent=app.agent,
        settings=settings,
        clock=lambda: app.clock().timestamp(),
        shared=app.shared_session,  # the dashboard's session is not read a second time
    )
    return SessionsScreen(
        table,
        app.open_session,
        use_watchfiles=app.use_watchfiles,
        thresholds=settings.thresholds,
    )

"""The sessions table as text: its columns, each row's cells, sorting, filtering and folding.

Shared by ``ctxtop sessions --watch`` and the dashboard's sessions screen, so both show the same
cells; the screen only adds colour.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ctxtop.engine.config import Thresholds
from ctxtop.engine.live.sessions_row import FULL, STATE_LABEL, TAIL, SessionRow
from ctxtop.engine.safety.terminal import one_line
from ctxtop.engine.sessions.limits import OK, fill_level, trigger_points
from ctxtop.engine.tokens.short import provenance_mark, short_tokens

BAR_WIDTH = 5
# After a figure read from the newest bytes of a bigger file (``SessionRow.figures`` "tail").
TAIL_MARK = "↑"
# A figure not read yet: the row's full figures come once it is shown.
NOT_READ = "…"
EIGHTHS = " ▏▎▍▌▋▊▉"


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    title: str
    width: int  # the widest cell shown (longer text is cut)
    sort: Callable[[SessionRow], Any]  # None sorts last either way
    right: bool = False  # numbers are right-aligned


COLUMNS: tuple[Column, ...] = (
    Column("agent", "agent", 12, lambda row: row.agent),
    Column("project", "project", 28, lambda row: row.project.lower()),
    Column("model", "model", 18, lambda row: (row.model or "").lower() or None),
    Column("fill", "fill", 13, lambda row: row.fill_percent, right=True),
    Column("context", "context", 8, lambda row: row.context_tokens, right=True),
    Column("growth", "growth", 7, lambda row: row.growth, right=True),
    Column("left", "left", 7, lambda row: row.requests_left, right=True),
    Column("cost", "cost", 8, lambda row: row.cost, right=True),
    Column("last", "last", 8, lambda row: -row.last_write, right=True),
    Column("state", "state", 10, lambda row: row.state),
)
COLUMN_KEYS = tuple(column.key for column in COLUMNS)
# Below this width the table leaves out model, growth and cost.
WIDE = 120
NARROW_COLUMNS = ("agent", "project", "fill", "context", "left", "last", "state")
DEFAULT_SORT = "fill"
# Columns whose natural order is largest first (fill, tokens, cost): the default direction.
DESCENDING_FIRST = {"fill", "context", "growth", "cost"}


def bar(percent: float, width: int = BAR_WIDTH) -> str:
    """A bar of ``width`` cells, filled to ``percent`` in eighths of a cell."""
    eighths = round(max(0.0, min(percent, 100.0)) / 100 * width * 8)
    full, part = divmod(eighths, 8)
    text = "█" * full + (EIGHTHS[part] if part else "")
    return text.ljust(width)


def level(row: SessionRow, thresholds: Thresholds) -> str:
    """ok, warning (past the editing trigger) or critical (past the compaction trigger), as the
    dashboard's gauge colours its fill."""
    if not row.window:
        return OK
    return fill_level(row.context_tokens, trigger_points(row.window, thresholds))


def ago(seconds: float) -> str:
    """How long ago, in steps of 10 s under a minute (each change redraws the cells)."""
    seconds = max(seconds, 0)
    if seconds < 10:
        return "now"
    if seconds < 60:
        return f"{seconds // 10 * 10:.0f}s ago"
    if seconds < 3600:
        return f"{seconds // 60:.0f}m ago"
    if seconds < 86400:
        return f"{seconds // 3600:.0f}h ago"
    return f"{seconds // 86400:.0f}d ago"


def cut_left(text: str, width: int) -> str:
    """The end of ``text`` in ``width`` cells (a path's last parts say the most)."""
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def cells(row: SessionRow, now: float, depth: int = 0, folded: bool = False) -> dict[str, str]:
    """Each column's text for ``row`` (``depth`` 1: a sub-agent under its parent; ``folded``:
    the row hides sub-agents)."""
    mark = provenance_mark(row.context_source)  # as on the dashboard's gauge
    tail = TAIL_MARK if row.figures == TAIL else ""
    # Not read yet (the row is read in full once shown), unlike "-": not known.
    none = "-" if row.figures == FULL else NOT_READ
    if depth:
        agent = "└ sub-agent"
    elif row.children:
        agent = f"{'▸' if folded else '▾'}{row.agent}"
    else:
        agent = f" {row.agent}"
    fill = "-" if row.fill_percent is None else f"{bar(row.fill_percent)} {row.fill_percent:5.1f}%"
    text = {
        "agent": agent,
        "project": row.project,
        "model": row.model or "-",
        "fill": fill + (mark if row.fill_percent is not None else ""),
        "context": short_tokens(row.context_tokens) + mark + tail,
        "growth": none if row.growth is None else "+" + short_tokens(row.growth),
        # A forecast, as the dashboard writes it; a cost priced from the simulation is an
        # estimate.
        "left": none if row.requests_left is None else f"~{row.requests_left:.0f}",
        "cost": none
        if row.cost is None
        else f"${row.cost:.2f}" + ("≈" if row.cost_simulated else ""),
        "last": ago(now - row.last_write) if row.last_write else "-",
        "state": STATE_LABEL.get(row.state, row.state),
    }
    for key in ("project", "model"):  # text from the log: shown, never obeyed
        text[key] = one_line(text[key])
    return text


def sort_rows(
    rows: Sequence[SessionRow], column: str = DEFAULT_SORT, descending: bool = True
) -> list[SessionRow]:
    """Rows by one column (sub-agents too, under their parent); empty figures last."""
    key = next(c.sort for c in COLUMNS if c.key == column)

    def ordered(items: Sequence[SessionRow]) -> list[SessionRow]:
        known = [row for row in items if key(row) is not None]
        unknown = [row for row in items if key(row) is None]
        known.sort(key=lambda row: (key(row), row.key), reverse=descending)
        return known + sorted(unknown, key=lambda row: row.key)

    return [
        _with_children(row, tuple(ordered(row.children))) if row.children else row
        for row in ordered(rows)
    ]


def _with_children(row: SessionRow, children: tuple[SessionRow, ...]) -> SessionRow:
    return replace(row, children=children)


def matches(row: SessionRow, text: str) -> bool:
    """Whether the filter text is in any of the row's cells, its title or its session id."""
    needle = text.casefold()
    words = [row.agent, row.project, row.model or "", row.state, STATE_LABEL.get(row.state, "")]
    words += [row.title or "", row.session_id or "", row.key]
    return any(needle in word.casefold() for word in words)


def filter_rows(rows: Sequence[SessionRow], text: str) -> list[SessionRow]:
    """The rows that match ``text``, or one of whose sub-agents does (then with those only)."""
    if not text:
        return list(rows)
    kept = []
    for row in rows:
        children = tuple(child for child in row.children if matches(child, text))
        if matches(row, text):
            kept.append(row)
        elif children:
            kept.append(_with_children(row, children))
    return kept


def flatten(
    rows: Sequence[SessionRow], unfolded: Collection[str] | None = None
) -> list[tuple[SessionRow, int]]:
    """Rows in display order with their depth; a parent's sub-agents follow it when its key is
    in ``unfolded`` (None: every parent unfolded)."""
    shown: list[tuple[SessionRow, int]] = []
    for row in rows:
        shown.append((row, 0))
        if row.children and (unfolded is None or row.key in unfolded):
            shown.extend((child, 1) for child in row.children)
    return shown


def column_widths(width: int, terminal: int | None = None) -> dict[str, int]:
    """The columns shown in ``width`` cells and each one's width (one space between them): the
    project takes what the others leave, 10 to 40. Which columns: by the ``terminal``'s width
    (default ``width``), so a 120-column terminal shows them all even with a scrollbar."""
    keys = COLUMN_KEYS if (terminal or width) >= WIDE else NARROW_COLUMNS
    widths = {c.key: c.width for c in COLUMNS if c.key in keys}
    others = sum(size + 1 for key, size in widths.items() if key != "project")
    widths["project"] = max(10, min(width - 1 - others, 40))
    return widths


def fit(column: Column, value: str, width: int) -> str:
    """``value`` cut and aligned to ``width``: a path keeps its end (its last parts say the
    most), other text its start; numbers to the right."""
    path = column.key == "project" and value[:1] in "/~"
    value = cut_left(value, width) if path else value[:width]
    return value.rjust(width) if column.right else value.ljust(width)


def text_table(rows: Sequence[SessionRow], now: float, width: int = 160) -> list[str]:
    """The table as lines of at most ``width`` characters (sub-agents unfolded)."""
    widths = column_widths(width)
    lines = [_line({c.key: c.title for c in COLUMNS}, widths)]
    for row, depth in flatten(rows):
        lines.append(_line(cells(row, now, depth), widths))
    if not rows:
        lines.append("no sessions active")
    return [line[:width] for line in lines]


def clip_to_height(lines: list[str], height: int) -> list[str]:
    """The table's lines under a title in a terminal ``height`` rows tall, redrawn in place:
    the title, these lines and the newline after them fit without scrolling; rows that do not
    fit are counted on the last line."""
    room = max(height - 2, 2)
    if len(lines) <= room:
        return lines
    hidden = len(lines) - (room - 1)
    return [*lines[: room - 1], f"… {hidden} more rows (a taller terminal shows them)"]


def _line(text: dict[str, str], widths: dict[str, int]) -> str:
    shown = [c for c in COLUMNS if c.key in widths]
    return " ".join(fit(c, text[c.key], widths[c.key]) for c in shown).rstrip()

"""Number formatting and log text shared by the widgets (presentation only)."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual.markup import escape

from ctxtop.engine.safety.terminal import one_line, printable
from ctxtop.engine.tokens.short import provenance_mark, short_tokens
from ctxtop.engine.words import plural as plural

CLEARED_MARK = "⌫"  # a tool result ctxtop's editing cleared (or would clear)
# 12345 -> 12.3k, 1234567 -> 1.23M: the engine's one short form of a token count.
tokens = short_tokens


mark = provenance_mark  # the engine's: none when reported, ~ calibrated, ≈ estimated, ...


def signed_tokens(count: int) -> str:
    """A difference of tokens with its sign ("+1.2k", "−2.1k")."""
    return ("+" if count > 0 else "−") + tokens(abs(count))


def share(fraction: float) -> str:
    """A share in whole per cent; one that is something but rounds to nothing is "<1 %"."""
    if 0 < fraction < 0.005:
        return "<1 %"
    return f"{100 * fraction:.0f} %"


def shown(text: str, *, lines: bool = False, limit: int | None = None) -> str:
    """Text from a log as the screen shows it: control characters (escape sequences, bidi
    overrides, NUL) written out visibly (``\\x1b``), never sent to the terminal; newlines too
    unless ``lines`` (a cell or a label is one line). ``limit``: at most that many characters
    (a name in a column; the written-out escapes count too)."""
    visible = printable(text) if lines else one_line(text)
    if limit is not None and len(visible) > limit:
        return visible[: limit - 1] + "…"
    return visible


def plain(text: str, style: str = "", *, lines: bool = False, limit: int | None = None) -> Text:
    """Log text as a ``Text``: never parsed as markup, control characters shown."""
    return Text(shown(text, lines=lines, limit=limit), style=style)


def in_markup(text: str) -> str:
    """Log text (a file name) for a place Textual reads as markup (a border title)."""
    return escape(shown(text))


def clock_time(stamp: str) -> str:
    """The time of day of a log's ISO 8601 timestamp ("14:04:41 UTC"), else the stamp as is."""
    if len(stamp) >= 19 and stamp[10] == "T":
        utc = stamp.endswith(("Z", "+00:00"))
        return stamp[11:19] + (" UTC" if utc else "")
    return stamp[:32]


def ago(when: datetime, now: datetime) -> str:
    """How long before ``now`` (both aware, or both naive): "4 s ago", "3 min ago", "2 h ago";
    further back, or ahead of ``now`` (another machine's clock), the local date and time."""
    seconds = (now - when).total_seconds()
    if 0 <= seconds < 120:
        return f"{seconds:.0f} s ago"
    if 0 <= seconds < 7200:
        return f"{seconds / 60:.0f} min ago"
    if 0 <= seconds < 86400:
        return f"{seconds / 3600:.0f} h ago"
    local = when.astimezone() if when.tzinfo is not None else when
    return f"at {local:%Y-%m-%d %H:%M}"


def log_time(stamp: str) -> datetime | None:
    """A log's ISO 8601 timestamp as an aware datetime (None if it is not one)."""
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.astimezone()


def short_name(name: str, limit: int = 24) -> str:
    """A session file's name for a title: a long one (a UUID) as its start and its end."""
    return name if len(name) <= limit else f"{name[:8]}…{name[-12:]}"


def about_file(problem: str, path: object) -> str:
    """A one-line error without its leading file name when the panel names that file."""
    return problem.removeprefix(f"{path}: ")

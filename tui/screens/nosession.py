"""No session found: where ctxtop looked, and how to see the dashboard anyway."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Center, Middle
from textual.widgets import Static

from ctxtop.tui import format as fmt


def no_session_text(places: list[str]) -> Text:
    text = Text()
    text.append("No agent session found.\n\n", style="bold")
    text.append("ctxtop looked for the newest session in:\n")
    for place in places:
        text.append(f"  • {fmt.shown(place)}\n")
    text.append("\nIt switches to a session as soon as one starts. Meanwhile:\n")
    text.append("  ctxtop --demo", style="bold")
    text.append("          replay a bundled sample session\n")
    text.append("  ctxtop SESSION_FILE", style="bold")
    text.append("    follow one log file\n")
    return text


class NoSession(Middle):
    DEFAULT_CSS = """
    NoSession { height: 1fr; }
    NoSession Static { width: 100%; max-width: 88; border: round $warning; padding: 0 1; }
    """

    def __init__(self, places: list[str], **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.places = places

    def compose(self) -> ComposeResult:
        with Center():
            yield Static(no_session_text(self.places), id="no-session-text")

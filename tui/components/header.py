"""The header line: agent, model, session, live/paused state and the time of the last update."""

from __future__ import annotations

from pathlib import PurePath

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from engine.live.view import LiveView
from tui import format as fmt

MODEL_WIDTH = 40  # a log's model name can be anything; the state after it must stay in view


class SessionHeader(Static):
    DEFAULT_CSS = """
    SessionHeader { height: 1; background: $panel; color: $foreground; padding: 0 1; }
    """

    paused: reactive[bool] = reactive(False)
    pinned: reactive[bool] = reactive(False)
    updated: reactive[str] = reactive("")

    def __init__(self, **kwargs: object) -> None:
        super().__init__("ctxtop", **kwargs)  # type: ignore[arg-type]
        self.view: LiveView | None = None
        self.note = "waiting for the session"

    def show(self, view: LiveView, updated: str) -> None:
        self.view = view
        self.updated = updated
        self.refresh()

    def render(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("ctxtop ", style="bold")
        view = self.view
        if view is None:
            text.append(self.note)
            return text
        text.append(view.agent, style="bold")
        text.append(" · ")
        text.append(fmt.shown(view.model or "unknown model", limit=MODEL_WIDTH))
        text.append(" · ")
        # A session id is long and unique early on; without one, the file's name.
        if view.session_id:
            text.append(fmt.shown(view.session_id[:8]))  # unique early on: its start
        else:
            text.append(fmt.shown(PurePath(view.file).name, limit=32))
        if view.title:
            text.append(" ")
            text.append(fmt.shown(view.title, limit=30))  # log content: never markup
        text.append(" · ")
        if self.paused:
            text.append("PAUSED", style="bold reverse")
        else:
            text.append("LIVE", style="bold")
        if self.pinned:
            text.append(" pinned")
        if self.updated:
            text.append(f" · updated {self.updated}")
        if view.last_activity:
            text.append(f" · agent wrote {fmt.clock_time(view.last_activity)}")
        return text

"""The header: agent, model, session, the state (LIVE or DEMO, and PAUSED), one clock (local time)
and how long ago the agent wrote, and what the analysis assumes when it is not the session's own
(a what-if window, another agent's profile).

One line when it fits; else the parts wrap onto a second line, never cut in the middle.
"""

from __future__ import annotations

from pathlib import PurePath

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from ctxtop.engine.live.view import LiveView
from ctxtop.tui import format as fmt

MODEL_WIDTH = 40  # a log's model name can be anything; the state after it must stay in view
SEPARATOR = " · "


class SessionHeader(Static):
    DEFAULT_CSS = """
    SessionHeader {
        height: auto; max-height: 2; background: $panel; color: $foreground; padding: 0 1;
    }
    """

    paused: reactive[bool] = reactive(False)
    pinned: reactive[bool] = reactive(False)
    updated: reactive[str] = reactive("")
    demo_loop: reactive[int | None] = reactive(None)  # the demo's replay (1, 2, …), else None
    stale: reactive[str] = reactive("")  # why the figures shown are no longer the file's
    # "edited live: the agent holds …, the model receives …" while the session is proxied
    live: reactive[str] = reactive("")

    def __init__(self, **kwargs: object) -> None:
        super().__init__("ctxtop", **kwargs)  # type: ignore[arg-type]
        self.view: LiveView | None = None
        self.wrote = ""  # "agent wrote 3 s ago"
        self.note = "waiting for the session"

    def show(self, view: LiveView, updated: str, wrote: str = "") -> None:
        self.view = view
        self.updated = updated
        self.wrote = wrote
        self.refresh(layout=True)

    def parts(self) -> list[Text]:
        """The header's parts in order of importance to a newcomer."""
        view = self.view
        if view is None:
            return [Text("ctxtop", style="bold"), Text(self.note)]
        state = Text()
        if self.demo_loop is not None:  # a recorded session, replayed: paused or not
            state.append("DEMO", style="bold reverse")
            state.append(f" loop {self.demo_loop} ")
        if self.stale:
            state.append("STALE", style="bold reverse")
            state.append(f" {self.stale}")
        elif self.paused:
            state.append("PAUSED", style="bold reverse")
        elif self.demo_loop is None:
            state.append("LIVE", style="bold")
        state.rstrip()
        if self.pinned:
            state.append(" pinned")
        parts = [
            Text.assemble(("ctxtop ", "bold"), (view.agent, "bold")),
            Text(fmt.shown(view.model or "unknown model", limit=MODEL_WIDTH)),
            state,
        ]
        if view.gauge.window_note is not None:
            parts.insert(2, Text(view.gauge.window_note, style="bold"))
        if self.live:
            parts.append(Text(self.live, style="bold"))
        if view.what_if is not None:
            parts.append(Text(f"WHAT-IF window {fmt.tokens(view.what_if)}", style="bold reverse"))
        if view.foreign_profile is not None:
            parts.append(
                Text(f"profile {view.foreign_profile}, not {view.agent}'s", style="bold reverse")
            )
        clock = Text(f"updated {self.updated}")
        if self.wrote:
            clock.append(f", {self.wrote}")
        parts.append(clock)
        # A session id is long and unique early on; without one, the file's name.
        session = fmt.shown(view.session_id[:8]) if view.session_id else ""
        session = session or fmt.shown(PurePath(view.file).name, limit=32)
        if view.title:
            session += " " + fmt.shown(view.title, limit=30)  # log content: never markup
        parts.append(Text(session))
        return parts

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        return len(self.lines(width))

    def render(self) -> Text:
        return Text("\n").join(self.lines(self.content_size.width))

    def lines(self, width: int) -> list[Text]:
        width = max(width, 20)
        lines = [Text(no_wrap=True, overflow="ellipsis")]
        for part in self.parts():
            line = lines[-1]
            if line.cell_len and line.cell_len + len(SEPARATOR) + part.cell_len > width:
                if len(lines) == 2:
                    break  # two lines at most: the least important parts go
                lines.append(Text(no_wrap=True, overflow="ellipsis"))
                line = lines[-1]
            elif line.cell_len:
                line.append(SEPARATOR)
            line.append_text(part)
        return lines

"""The ctxtop dashboard: a Textual app showing the ``LiveView`` samples its feed posts.

Data flow: ``Feed`` (a thread worker, ``tui/feed.py``) follows the file and posts
``SessionUpdated``; ``apply`` hands each widget its part of the view and posts ``ViewApplied``.
Widgets only draw what the view holds: every figure is computed in ``engine/live``.

Analysis panels (sections with flex budgets, the prompt tree with pruned nodes and cache
breakpoints, the forecast of requests left, the what-if budget ``b`` and layout profile ``p``)
plug in the same way once ``engine/analysis`` exists: a field of ``LiveView`` filled by the
engine, one component per panel in ``tui/components``, a slot in ``#panels`` and a binding.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import ClassVar

from textual import events
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Container, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static

from engine.config import Settings
from engine.live.demo import DemoReplay
from engine.live.locate import newest_session
from engine.live.session import LiveSession
from engine.live.view import LiveView
from themes.loader import all_themes
from tui.components.categories import ContextCategories
from tui.components.events import EventLog
from tui.components.gauge import ContextGauge
from tui.components.header import SessionHeader
from tui.components.history import FillHistory
from tui.components.subagents import SubagentsTable
from tui.components.tools import ToolsTable
from tui.feed import Feed
from tui.messages import FeedProblem, LoadProgress, NewerSession, SessionUpdated, ViewApplied
from tui.screens.help import HelpScreen
from tui.screens.nosession import NoSession

NEWER_CHECK_SECONDS = 3.0
# From this size on, the panels go two by two and the sub-agents panel is shown.
ROOMY = (110, 34)


class CtxtopApp(App[None]):
    TITLE = "ctxtop"
    CSS = """
    #dashboard { height: 1fr; }
    #panels { height: 1fr; layout: grid; grid-size: 2 2; grid-columns: 1fr 1fr; }
    #events { column-span: 2; }
    #subagents { display: none; }
    .roomy #events { column-span: 1; }
    .roomy #panels { grid-size: 2 2; grid-columns: 1fr 1fr; grid-rows: 1fr 1fr; }
    .roomy #subagents { display: block; }
    #status { height: 1; padding: 0 1; color: $warning; display: none; }
    #status.shown { display: block; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help"),
        Binding("space", "pause", "Pause"),
        Binding("f", "pin", "Pin"),
        Binding("s", "sort_tools", "Sort"),
        Binding("t", "cycle_theme", "Theme"),
    ]
    ACTIONS: ClassVar[dict[str, tuple[str, str]]] = {
        "pause": ("Pause / resume", "Freeze the screen; updates wait until resumed"),
        "pin": ("Pin / follow newest", "Stay on this session, or switch to newer ones"),
        "sort_tools": ("Sort tools", "Sort the tools by tokens, calls or name"),
        "cycle_theme": ("Next theme", "Cycle the dark, light, high-contrast and user themes"),
        "help": ("Help", "Keys and what the gauge's marks mean"),
    }

    def __init__(
        self,
        path: Path | None,
        *,
        settings: Settings | None = None,
        follow_newest: bool = False,
        agent: str | None = None,
        places: list[str] | None = None,
        demo: DemoReplay | None = None,
        clock: Callable[[], datetime] = datetime.now,
        use_watchfiles: bool = True,
        newer_check: float = NEWER_CHECK_SECONDS,
    ) -> None:
        super().__init__()
        self.settings = settings or Settings()
        self.path = path
        self.follow_newest = follow_newest
        self.agent = agent
        self.places = places or []
        self.demo = demo
        self.clock = clock
        self.use_watchfiles = use_watchfiles
        self.newer_check = newer_check
        self.view: LiveView | None = None
        self.paused = False
        self.pinned = not follow_newest
        self.feed: Feed | None = None
        self._held: LiveView | None = None
        self._demo_stop = threading.Event()
        self.theme_names: list[str] = []
        self.theme_errors: list[str] = []

    # -- layout ------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield SessionHeader(id="header")
        with Vertical(id="dashboard"):
            yield ContextGauge(id="gauge")
            yield FillHistory(id="history")
            with Container(id="panels"):
                yield ContextCategories(id="categories")
                yield ToolsTable(id="tools")
                yield EventLog(id="events")
                yield SubagentsTable(id="subagents")
        yield NoSession(self.places, id="no-session")
        yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        themes, self.theme_errors = all_themes()
        for theme in themes:
            self.register_theme(theme)
        self.theme_names = [theme.name for theme in themes]
        wanted = self.settings.theme
        self.theme = wanted if wanted in self.theme_names else self.theme_names[0]
        if self.theme_errors:
            self.notify("\n".join(self.theme_errors), title="Theme files", severity="warning")
        self.query_one(SessionHeader).pinned = self.pinned and self.follow_newest
        if self.demo is not None:
            self.run_worker(
                lambda: self.demo.run(self._demo_stop) if self.demo else None,
                thread=True,
                group="demo",
            )
        if self.follow_newest:
            self.set_interval(self.newer_check, self._check_newer)
        self._show_session(self.path)

    def on_resize(self, event: events.Resize) -> None:
        roomy = event.size.width >= ROOMY[0] and event.size.height >= ROOMY[1]
        self.set_class(roomy, "roomy")

    def _show_session(self, path: Path | None) -> None:
        found = path is not None
        self.query_one("#dashboard").display = found
        self.query_one(NoSession).display = not found
        if path is not None:
            self.start_feed(path)

    def start_feed(self, path: Path) -> None:
        if self.feed is not None:
            self.feed.stop.set()
        self.path = path
        self.view = None
        self.feed = Feed(
            LiveSession(path, self.settings.thresholds),
            self.post_message,
            poll_interval=self.settings.refresh,
            use_watchfiles=self.use_watchfiles,
        )
        self.run_worker(self.feed.run, thread=True, exclusive=True, group="feed")

    def on_unmount(self) -> None:
        self._demo_stop.set()
        if self.feed is not None:
            self.feed.stop.set()

    # -- updates -----------------------------------------------------------------------------

    def on_session_updated(self, message: SessionUpdated) -> None:
        view = (self.feed.take() if self.feed is not None else None) or message.view
        if view.file != str(self.path):
            return  # posted by the feed of a session the app has switched away from
        if self.paused:
            self._held = view
            return
        self.apply(view)

    def apply(self, view: LiveView) -> None:
        self.view = view
        self._set_status("")
        self.query_one(SessionHeader).show(view, self.clock().strftime("%H:%M:%S"))
        self.query_one(ContextGauge).show(view.gauge)
        self.query_one(FillHistory).show(view)
        self.query_one(ContextCategories).show(view.categories)
        self.query_one(ToolsTable).show(view.tools)
        self.query_one(EventLog).show(view.events)
        self.query_one(SubagentsTable).show(view.subagents)
        self.post_message(ViewApplied(view, time.perf_counter()))

    def on_load_progress(self, message: LoadProgress) -> None:
        if not message.total or self.view is not None:
            return
        if message.done >= message.total:
            self._set_status(f"loaded {message.total:,} bytes of {self.path}: counting tokens")
        else:
            percent = 100 * message.done / message.total
            self._set_status(f"loading {self.path}: {percent:.0f} % of {message.total:,} bytes")

    def on_feed_problem(self, message: FeedProblem) -> None:
        self._set_status(message.text)

    def _set_status(self, text: str) -> None:
        status = self.query_one("#status", Static)
        status.update(text)
        status.set_class(bool(text), "shown")

    def _check_newer(self) -> None:
        if not self.pinned:
            self.run_worker(self._look_for_newer, thread=True, exclusive=True, group="discover")

    def _look_for_newer(self) -> None:
        path = newest_session(self.agent)
        if path is not None and path != self.path:
            self.post_message(NewerSession(path))

    def on_newer_session(self, message: NewerSession) -> None:
        if self.pinned or message.path == self.path:
            return
        self.notify(str(message.path), title="Following a newer session")
        self._show_session(message.path)

    # -- actions -----------------------------------------------------------------------------

    def action_help(self) -> None:
        keys = [
            (b.key.replace("question_mark", "?"), self.ACTIONS.get(b.action, (b.description,))[0])
            for b in self.BINDINGS
            if isinstance(b, Binding)
        ]
        keys.append(("ctrl+p", "Command palette: every action by name"))
        self.push_screen(HelpScreen(keys))

    def action_pause(self) -> None:
        self.paused = not self.paused
        self.query_one(SessionHeader).paused = self.paused
        if not self.paused and self._held is not None:
            view, self._held = self._held, None
            self.apply(view)

    def action_pin(self) -> None:
        if not self.follow_newest:
            self.notify("A session file given on the command line is always pinned.")
            return
        self.pinned = not self.pinned
        self.query_one(SessionHeader).pinned = self.pinned
        self.notify("Pinned to this session" if self.pinned else "Following the newest session")

    def action_sort_tools(self) -> None:
        self.query_one(ToolsTable).cycle_sort()

    def action_cycle_theme(self) -> None:
        if not self.theme_names:
            return
        index = self.theme_names.index(self.theme) if self.theme in self.theme_names else -1
        self.theme = self.theme_names[(index + 1) % len(self.theme_names)]

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for action, (title, help_text) in self.ACTIONS.items():
            yield SystemCommand(title, help_text, getattr(self, f"action_{action}"))

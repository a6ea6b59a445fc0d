"""The ctxtop dashboard: a Textual app showing the ``LiveView`` samples its feed posts.

Data flow: ``Feed`` (``engine/live/feed.py``, in a thread worker; ``tui/live_feed.py`` turns its
events into messages) follows the file, builds each sample with its analysis (``engine/live``,
``engine/analysis``) and posts ``SessionUpdated``; ``apply`` hands
each widget its part of the view and posts ``ViewApplied``. Widgets only draw what the view holds.
The what-if window (``b``) and the layout profile (``p``) are an ``AnalysisChoice``: a change is
analysed again in a worker thread (``Feed.refresh``) and arrives as the next ``SessionUpdated``.
``e`` opens the editing panel (``tui/screens/edit_panel.py``), ``c`` the compaction panel
(``tui/screens/compact_panel.py``); their previews and forks run in workers.

Layout: the overview (gauge, fill per request with the forecast, sections, tools, events; from
110x34 the prompt tree and sub-agents beside them) and the tree view (``v``: prompt tree, context
by kind, sub-agents). Both are the same widgets in one grid; CSS classes on the app choose.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Container, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Static

from ctxtop.engine.analysis.profiles import available_profiles
from ctxtop.engine.config import Settings
from ctxtop.engine.live.demo import DemoReplay
from ctxtop.engine.live.locate import newest_sessions
from ctxtop.engine.live.session import AnalysisChoice, LiveSession
from ctxtop.engine.live.view import LiveView
from ctxtop.engine.words import first_lines
from ctxtop.themes.loader import all_themes
from ctxtop.tui import format as fmt
from ctxtop.tui.components.categories import ContextCategories
from ctxtop.tui.components.events import EventLog
from ctxtop.tui.components.fill_history import FillHistory
from ctxtop.tui.components.gauge import ContextGauge
from ctxtop.tui.components.header import SessionHeader
from ctxtop.tui.components.prompt_tree import IN_FORK_NOTE, PromptTree
from ctxtop.tui.components.sections_panel import SectionsPanel
from ctxtop.tui.components.subagents import SubagentsTable
from ctxtop.tui.components.tools_panel import ToolsTable
from ctxtop.tui.live_apply import LiveApplyApp
from ctxtop.tui.live_feed import Feed
from ctxtop.tui.messages import (
    CutPreviewed,
    FeedProblem,
    FeedStale,
    LoadProgress,
    NewerSession,
    SessionUpdated,
    SkippedFiles,
    ViewApplied,
)
from ctxtop.tui.screens.nosession import NoSession

if TYPE_CHECKING:
    from ctxtop.engine.forks.transaction import Details, Outcome
    from ctxtop.tui.screens.fork_panel import Sample

# The panels and the other screens are imported when first opened, not before the first screen
# (the editing and compaction engines, the sessions table: ~0.1 s of CPU at startup).

NEWER_CHECK_SECONDS = 3.0
SHOWN_THEME_ERRORS = 5  # one line per bad theme file up to here, then one for the rest
# The app's keys that work on the sessions screen too (the others type into its filter).
SESSIONS_KEEPS = {"quit", "help", "command_palette"}
# From this size on, the prompt tree sits beside the sections and the sub-agents are shown.
ROOMY = (110, 34)
# Seconds new figures wait for their analysis before they are shown without it.
ANALYSIS_HOLD = 0.5


class CtxtopApp(LiveApplyApp):
    TITLE = "ctxtop"
    CSS = """
    /* The file is gone, unreadable or truncated: the figures shown are from before. */
    CtxtopApp.stale ContextGauge, CtxtopApp.stale SectionsPanel { text-opacity: 50%; }
    #dashboard { height: 1fr; }
    #panels { height: 1fr; layout: grid; grid-size: 2 2; grid-columns: 3fr 2fr; }
    #sections { row-span: 2; }
    #tree, #categories, #subagents { display: none; }
    .roomy #panels { grid-size: 2 3; grid-columns: 1fr 1fr; grid-rows: 11 1fr 1fr; }
    .roomy #sections { row-span: 1; }
    /* The agent's own split of the prompt takes the sections panel's first lines. */
    .roomy #panels.agent-split { grid-rows: 14 1fr 1fr; }
    .roomy #tree { display: block; row-span: 2; }
    .roomy #subagents { display: block; }
    .tree-view #history, .tree-view #sections, .tree-view #tools, .tree-view #events {
        display: none;
    }
    .tree-view #panels { grid-size: 2 2; grid-columns: 3fr 2fr; grid-rows: 1fr 1fr; }
    .tree-view #tree { display: block; row-span: 2; }
    .tree-view #categories, .tree-view #subagents { display: block; }
    #status { height: 1; padding: 0 1; color: $warning; display: none; }
    #status.shown { display: block; }
    #unknown-records { height: 1; padding: 0 1; color: $warning; display: none; }
    #unknown-records.shown { display: block; }
    """
    AUTO_FOCUS = "#tools"  # the tree is not on the overview at 80x24
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help"),
        Binding("space", "pause", "Pause"),
        Binding("v", "toggle_view", "Tree"),
        Binding("b", "budget", "What-if"),
        Binding("e", "edit", "Edit"),
        Binding("c", "compact", "Compact"),
        Binding("f", "pin", "Pin"),
        Binding("a", "sessions", "Sessions", show=False),
        # Not in the footer (80 columns hold the rest and "^p keys"): in the help and the
        # command palette, which the footer names.
        Binding("p", "cycle_profile", "Profile", show=False),
        Binding("slash", "search", "Search", show=False),
        Binding("s", "sort_tools", "Sort", show=False),
        Binding("t", "cycle_theme", "Theme", show=False),
        Binding("m", "measured", "Measured", show=False),
        Binding("l", "stop_live", "Stop live"),  # in the footer only while a plan is in force
        # When f or l may not act (check_action), these say why instead of nothing happening.
        Binding("f", "unavailable('pin')", show=False),
        Binding("l", "unavailable('stop_live')", show=False),
    ]
    ACTIONS: ClassVar[dict[str, tuple[str, str]]] = {
        "pause": ("Pause / resume", "Freeze the screen; updates wait until resumed"),
        "toggle_view": ("Prompt tree / overview", "Switch between the overview and the tree"),
        "budget": ("What-if window", "Analyse as if the window held N tokens (empty: its own)"),
        "cycle_profile": ("Next layout profile", "Analyse with the next layout profile"),
        "search": ("Search the prompt tree", "Find nodes by label (enter: next match)"),
        "edit": ("Edit: clear old tool results", "Preview a policy, then write a resumable fork"),
        "compact": (
            "Compact: summarise old rounds",
            "Preview the summary and its cost, then write a resumable fork",
        ),
        "pin": ("Pin / follow newest", "Stay on this session, or switch to newer ones"),
        "sort_tools": ("Sort tools", "Sort the tools by tokens, calls or name"),
        "cycle_theme": ("Next theme", "Cycle the dark, light, high-contrast and user themes"),
        "help": ("Help", "Keys and what the gauge's marks mean"),
        "sessions": ("All sessions", "Every agent session active lately, live; enter opens one"),
        "measured": (
            "Measured prompt",
            "System prompt, each tool's cost and the cache breakpoints as sent (live mode)",
        ),
        "stop_live": (
            "Stop applying live",
            "The proxy sends the agent's own requests again (after Apply live)",
        ),
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
        start_on_sessions: bool = False,
        proxy_port: int | None = None,
        passed_over: list[Path] | None = None,
    ) -> None:
        """``passed_over``: following the newest session, the newer files the launch already
        found not to be sessions (None: the app looks for itself at once)."""
        super().__init__()
        self.proxy_port = proxy_port  # live mode: ctxtop's proxy runs beside the dashboard
        self.settings = settings or Settings()
        self.path = path
        self.follow_newest = follow_newest
        self.agent = agent
        self.places = places or []
        self.demo = demo
        self.clock = clock
        self.use_watchfiles = use_watchfiles
        self.newer_check = newer_check
        self.start_on_sessions = start_on_sessions
        self.passed_over = passed_over
        self.view: LiveView | None = None
        self.paused = False
        self.pinned = not follow_newest
        self.skipped_seen: set[Path] = set()  # junk files already said to be passed over
        self.feed: Feed | None = None
        self._held: LiveView | None = None
        self._hold_timer: Timer | None = None  # set while figures wait for their analysis
        self._waiting: LiveView | None = None  # the newest of them
        self._demo_stop = threading.Event()
        self.theme_names: list[str] = []
        self.theme_errors: list[str] = []
        # The settings' "default" profile means the agent's own.
        default = self.settings.profile
        self.choice = AnalysisChoice(profile=None if default == "default" else default)

    # -- layout ------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        # Kept by reference: ``query_one`` looks at the active screen, which may be a modal.
        self.header = SessionHeader(id="header")
        self.dashboard = Vertical(id="dashboard")
        self.panels = Container(id="panels")
        self.gauge = ContextGauge(self.clock, id="gauge")
        self.history = FillHistory(id="history")
        self.sections = SectionsPanel(id="sections")
        self.prompt_tree = PromptTree(id="tree")
        self.tools = ToolsTable(id="tools")
        self.events = EventLog(id="events")
        self.categories = ContextCategories(id="categories")
        self.subagents = SubagentsTable(id="subagents")
        self.no_session = NoSession(self.places, id="no-session")
        self.status = Static("", id="status")
        self.unknown_records = Static("", id="unknown-records")
        yield self.header
        yield self.unknown_records
        with self.dashboard:
            yield self.gauge
            yield self.history
            with self.panels:  # grid order: see CSS
                yield self.sections
                yield self.prompt_tree
                yield self.tools
                yield self.events
                yield self.categories
                yield self.subagents
        yield self.no_session
        yield self.status
        yield Footer(compact=True)  # ctrl+p: the palette lists every key

    def on_mount(self) -> None:
        themes, self.theme_errors = all_themes()
        for theme in themes:
            self.register_theme(theme)
        self.theme_names = [theme.name for theme in themes]
        if self.proxy_port:
            url = f"http://127.0.0.1:{self.proxy_port}"
            self.notify(f"ctxtop proxy on {url}: ANTHROPIC_BASE_URL={url} claude", timeout=15)
        wanted = self.settings.theme
        self.theme = wanted if wanted in self.theme_names else self.theme_names[0]
        problems = first_lines(self.theme_errors, SHOWN_THEME_ERRORS, "theme file", "skipped")
        if wanted != self.theme:
            problems.append(f"the settings' theme {wanted!r} is not loaded: {self.theme} instead")
        if problems:
            text = fmt.shown("\n".join(problems), lines=True)  # quote the files
            self.notify(text, title="Theme files", severity="warning", markup=False)
        self.header.pinned = self.pinned and self.follow_newest
        if self.demo is not None:
            self.run_worker(
                lambda: self.demo.run(self._demo_stop) if self.demo else None,
                thread=True,
                group="demo",
            )
        if self.follow_newest:
            self.set_interval(self.newer_check, self._check_newer)
            if self.passed_over is None:
                self._check_newer()  # says now if newer files were passed over
            elif self.passed_over:  # the launch just looked: no second listing on the way
                self.post_message(SkippedFiles(self.passed_over))
        self._show_session(self.path)
        self.start_live_checks()
        if self.start_on_sessions:
            self.action_sessions()

    def on_resize(self, event: events.Resize) -> None:
        roomy = event.size.width >= ROOMY[0] and event.size.height >= ROOMY[1]
        self.set_class(roomy, "roomy")

    def _show_session(self, path: Path | None) -> None:
        found = path is not None
        self.dashboard.display = found
        self.no_session.display = not found
        if path is not None:
            self.start_feed(path)

    def start_feed(self, path: Path) -> None:
        if self.feed is not None:
            self.feed.stop.set()
        self.path = path
        self.view = None
        self.prompt_tree.outline_tree.forget_session()
        self.feed = Feed(
            self._session_for(path),
            self.post_message,
            poll_interval=self.settings.refresh,
            use_watchfiles=self.use_watchfiles,
            choice=self.choice,
        )
        self.run_worker(self.feed.run, thread=True, exclusive=True, group="feed")

    def _session_for(self, path: Path) -> LiveSession:
        """The session as the sessions table already reads it (opened from the table: shown
        without reading the file again), else a new one."""
        if self.is_screen_installed("sessions"):
            from ctxtop.tui.screens.sessions import SessionsScreen

            screen = self.get_screen("sessions")
            live = screen.table.session_of(path) if isinstance(screen, SessionsScreen) else None
            if live is not None:
                return live
        return LiveSession(path, self.settings.thresholds)

    def shared_session(self, path: Path) -> LiveSession | None:
        """The session the dashboard reads, if it is ``path`` (for the sessions table, from its
        worker thread: the file is read once and held once)."""
        feed = self.feed
        return feed.session if feed is not None and feed.session.path == path else None

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
        self._show_with_analysis(view)

    def _show_with_analysis(self, view: LiveView) -> None:
        """New figures come a moment before their analysis (sections, forecast, tree): they
        wait for it up to ``ANALYSIS_HOLD``, so gauge and sections show the same sample; after
        that the newest figures are shown, the sections marked as the previous sample's."""
        if not self._analysis_lags(view):
            self.apply(view)
            return
        self._waiting = view
        if self._hold_timer is None:  # the first wait counts: the figures are never held longer
            self._hold_timer = self.set_timer(ANALYSIS_HOLD, self._show_waiting)

    def _show_waiting(self) -> None:
        view, self._waiting = self._waiting, None
        if view is not None:
            self.apply(view)

    def _analysis_lags(self, view: LiveView) -> bool:
        """``view`` carries the analysis on screen, made for other figures than its own."""
        shown = self.view
        return (
            shown is not None
            and view.analysis is not None
            and view.analysis is shown.analysis
            and view.gauge != shown.gauge
        )

    def apply(self, view: LiveView) -> None:
        lagging = self._analysis_lags(view)
        if self._hold_timer is not None:
            self._hold_timer.stop()
        self._hold_timer, self._waiting = None, None
        self.view = view
        self._set_status("")
        now = self.clock()
        if self.demo is not None:
            self.header.demo_loop = self.demo.rounds + 1
        self.header.show(view, now.strftime("%H:%M:%S"), self._wrote(view, now))
        self.gauge.show(view.shown_gauge, view.foreign_profile)
        self.gauge.show_cache(view.sample.cache_prefix, view.model)
        self.history.show(view)
        self.categories.show(view.categories)
        self.sections.show(
            view.analysis, view.analysis_error, view.foreign_profile is not None, view.agent_split
        )
        self.panels.set_class(bool(view.agent_split), "agent-split")
        self.sections.mark_lagging(lagging)
        pruned = len(view.analysis.pruned) if view.analysis is not None else 0
        self.prompt_tree.show(view.outline, pruned)
        self.tools.show(view.tools)
        self.events.show(view.events)
        self.subagents.show(view.subagents)
        notice = view.unknown_records or ""
        self.unknown_records.update(fmt.plain(notice))  # type names come from the log
        self.unknown_records.set_class(bool(notice), "shown")
        self.post_message(ViewApplied(view, time.perf_counter()))

    def _wrote(self, view: LiveView, now: datetime) -> str:
        """When the agent last wrote: the demo's last line, else when its files were last
        written (the sessions table's clock), else the log's last timestamp."""
        written = self.demo.last_write if self.demo is not None else view.last_write
        if written is not None:
            wrote = datetime.fromtimestamp(written, now.tzinfo)  # as aware as now
            return f"agent wrote {fmt.ago(wrote, now)}"
        stamp = fmt.log_time(view.last_activity or "")
        if stamp is None:
            return ""
        return f"agent wrote {fmt.ago(stamp, now.astimezone())}"

    def on_load_progress(self, message: LoadProgress) -> None:
        if not message.total or self.view is not None:
            return
        if message.done >= message.total:
            self._set_status(
                f"loaded {message.total:,} bytes of {self.path}: counting tokens, analysing"
            )
        else:
            percent = 100 * message.done / message.total
            self._set_status(f"loading {self.path}: {percent:.0f} % of {message.total:,} bytes")

    def on_feed_problem(self, message: FeedProblem) -> None:
        self._set_status(message.text)

    def on_feed_stale(self, message: FeedStale) -> None:
        """The figures on screen are no longer the file's (or are again): header and status."""
        self.header.stale = message.reason
        self.set_class(bool(message.reason), "stale")
        if message.reason:
            self._set_status(f"{self.path}: {message.reason}; the figures shown are from before")

    def _set_status(self, text: str) -> None:
        status = self.status
        status.update(fmt.plain(text))  # paths and errors quote the file: never markup
        status.set_class(bool(text), "shown")

    def _check_newer(self) -> None:
        if self.pinned or not self.screen_stack:
            return  # pinned, or the app is closing (its timer can fire after the last screen)
        # Under the sessions table the dashboard stays on its session: the table shows the rest.
        if self.screen.id != "sessions":
            self.run_worker(self._look_for_newer, thread=True, exclusive=True, group="discover")

    def _look_for_newer(self) -> None:
        path, skipped = newest_sessions(self.agent)
        if skipped:
            self.post_message(SkippedFiles(skipped))
        if path is not None and path != self.path:
            self.post_message(NewerSession(path))

    def on_skipped_files(self, message: SkippedFiles) -> None:
        new = [path for path in message.paths if path not in self.skipped_seen]
        if not new:
            return
        self.skipped_seen.update(new)
        names = ", ".join(fmt.shown(path.name) for path in new[:3])
        more = f" and {len(new) - 3} more" if len(new) > 3 else ""
        self.notify(  # file names are never markup
            f"{names}{more}: not a session of any known agent; following the newest session",
            title="Skipped newer files",
            severity="warning",
            markup=False,
        )

    def on_cut_previewed(self, message: CutPreviewed) -> None:
        """A panel's preview: the prompt tree shows what it would change (until the next one,
        a written fork's marks, or another session)."""
        if message.source == self.path:
            self.prompt_tree.mark_calls(message.note, message.call_ids)

    def on_newer_session(self, message: NewerSession) -> None:
        if self.pinned or message.path == self.path:
            return
        self.notify(fmt.shown(str(message.path)), title="Following a newer session", markup=False)
        self._show_session(message.path)

    # -- actions -----------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        on_sessions = any(screen.id == "sessions" for screen in self.screen_stack)
        if on_sessions and action not in SESSIONS_KEEPS:
            # The dashboard's keys act on the dashboard; on the table (and its help) they
            # filter or are its own.
            return False
        # Not in the footer while they would do nothing (their key then says why).
        return self.why_not(action) is None

    def why_not(self, action: str) -> str | None:
        """Why ``action`` would do nothing now, or None."""
        if action == "pin" and not self.follow_newest:
            # Pinning means something only when following the newest session.
            if self.demo is not None:
                return "The demo replays one recorded session: there is no newer one to follow."
            return (
                "A session file given on the command line stays on screen; run ctxtop without"
                " a file to follow the newest session."
            )
        if action == "stop_live" and (self.live is None or self.live.plan is None):
            return (
                "Nothing is applied live to this session: l stops what Apply live (in the e"
                " and c panels, for a session going through ctxtop's proxy) started."
            )
        return None

    def action_unavailable(self, action: str) -> None:
        reason = self.why_not(action)
        if reason is not None:
            title = self.ACTIONS[action][0]
            self.notify(reason, title=f"{title}: nothing to do", markup=False)

    def action_help(self) -> None:
        from ctxtop.tui.screens.help import HelpScreen, binding_keys

        titles = {action: title for action, (title, _) in self.ACTIONS.items()}
        keys = binding_keys(self.BINDINGS, titles)
        keys.append(("ctrl+p", "Command palette: every action by name"))
        self.push_screen(HelpScreen(keys))

    def action_sessions(self) -> None:
        """The sessions screen (one, kept while the app runs: its table stays current)."""
        if not self.is_screen_installed("sessions"):
            from ctxtop.tui.screens.sessions import sessions_screen

            self.install_screen(sessions_screen(self), "sessions")
        if self.screen.id != "sessions":
            self.push_screen("sessions")

    def open_session(self, path: Path) -> None:
        """Show ``path`` on the dashboard, pinned (chosen on the sessions screen)."""
        self.pinned = True
        self.header.pinned = self.follow_newest
        if path != self.path:
            self._show_session(path)
        if self.screen.id == "sessions":
            self.pop_screen()

    def action_measured(self) -> None:
        from ctxtop.tui.screens.measured import MeasuredScreen

        measured = self.view.measured if self.view is not None else None
        self.push_screen(MeasuredScreen(measured, self.proxy_port))

    def action_pause(self) -> None:
        self.paused = not self.paused
        self.header.paused = self.paused
        view, feed = self.view, self.feed
        if feed is not None:  # the panels preview the frozen sample from the session held
            feed.session.keep_at(view.bytes_read if self.paused and view is not None else None)
        if not self.paused and self._held is not None:
            view, self._held = self._held, None
            self._show_with_analysis(view)

    def action_pin(self) -> None:
        self.pinned = not self.pinned
        self.header.pinned = self.pinned
        self.notify("Pinned to this session" if self.pinned else "Following the newest session")

    def action_toggle_view(self) -> None:
        self.toggle_class("tree-view")
        if self.has_class("tree-view"):
            self.prompt_tree.outline_tree.focus()
        else:
            self.tools.focus()

    def action_search(self) -> None:
        tree = self.prompt_tree
        if not tree.display or not self.has_class("roomy"):
            self.add_class("tree-view")
        tree.open_search()

    def action_budget(self) -> None:
        from ctxtop.tui.screens.budget import BudgetScreen

        self.push_screen(BudgetScreen(self.choice.window), self._budget_chosen)

    def _budget_chosen(self, tokens: int | None) -> None:
        from ctxtop.tui.screens.budget import MODELS_OWN

        if tokens is None:
            return  # cancelled
        window = None if tokens == MODELS_OWN else tokens
        self.analyse(AnalysisChoice(self.choice.profile, window))
        self.notify(
            "the model's own window" if window is None else f"as if the window held {window:,}",
            title="What-if window",
        )

    def action_cycle_profile(self) -> None:
        names = available_profiles()
        analysis = self.view.analysis if self.view is not None else None
        current = analysis.profile if analysis is not None else self.choice.profile
        index = names.index(current) if current in names else -1
        chosen = names[(index + 1) % len(names)]
        self.analyse(AnalysisChoice(chosen, self.choice.window))
        self.notify(chosen, title="Layout profile")

    def analyse(self, choice: AnalysisChoice) -> None:
        """Analyse again with ``choice``, in a worker thread; the result is the next update."""
        self.choice = choice
        feed = self.feed
        if feed is None:
            return
        self.run_worker(lambda: feed.refresh(choice), thread=True, exclusive=True, group="analysis")

    def action_edit(self) -> None:
        if self.path is None or self.view is None:
            self.notify("No session to edit yet.")
            return
        from ctxtop.tui.screens.edit_panel import EditScreen

        path = self.path
        panel = EditScreen(path, self._sample())
        panel.live_session = self.live_session()  # "Apply live" when the session is proxied
        panel.held = self.shared_session(path)  # previews start from the dashboard's session
        panel.demo = self.demo is not None
        self.push_screen(panel, lambda outcome: self._edited(outcome, path))

    def action_compact(self) -> None:
        if self.path is None or self.view is None:
            self.notify("No session to compact yet.")
            return
        from ctxtop.tui.screens.compact_panel import CompactScreen

        path = self.path
        analysis = self.view.analysis
        growth = analysis.forecast.growth_per_request if analysis is not None else None
        panel = CompactScreen(path, self.settings.llm, growth, self._sample())
        panel.live_session = self.live_session()  # "Apply live" when the session is proxied
        panel.held = self.shared_session(path)  # previews start from the dashboard's session
        panel.demo = self.demo is not None
        self.push_screen(panel, lambda outcome: self._edited(outcome, path))

    def on_event_log_compaction_chosen(self, chosen: EventLog.CompactionChosen) -> None:
        if self.path is None or self.view is None:
            return
        from ctxtop.tui.screens.compaction_inspector import CompactionScreen

        view, path = self.view, self.path
        upto = view.bytes_read or None  # what the dashboard shows (frozen while paused)
        screen = CompactionScreen(path, chosen.line, upto, view.sample.compactions)
        self.push_screen(screen, lambda outcome: self._edited(outcome, path))

    def _sample(self) -> Sample:
        """What the dashboard shows (frozen while paused): the panels preview the same bytes
        and start from the gauge's figure."""
        from ctxtop.tui.screens.fork_panel import Sample

        view = self.view
        if view is None:
            return Sample()
        gauge = view.gauge
        read = view.bytes_read  # 0: a whole-document format
        prefix = view.sample.cache_prefix
        shown = (gauge.tokens, gauge.source)
        return Sample(read or None, shown, prefix, view.model, self.clock, gauge.autocompact_at)

    def _edited(self, outcome: Outcome[Details] | None, source: Path) -> None:
        from ctxtop.engine.forks.edit import EditDetails

        if outcome is not None and outcome.fork is not None:
            details = outcome.preview.details
            changed = details.changed if isinstance(details, EditDetails) else ()
            cleared = frozenset(change.tool_call_id for change in changed)
            if cleared and source == self.path:  # until the session changes (start_feed)
                self.prompt_tree.mark_calls(IN_FORK_NOTE, cleared)
            resume = outcome.resume_command
            self.notify(  # the command quotes the session's cwd: never markup
                fmt.shown(f"resume with: {resume}") if resume else "",
                title=fmt.shown(f"Fork written: {outcome.fork.name}"),
                timeout=10,
                markup=False,
            )

    def action_sort_tools(self) -> None:
        self.tools.cycle_sort()

    def action_cycle_theme(self) -> None:
        if not self.theme_names:
            return
        index = self.theme_names.index(self.theme) if self.theme in self.theme_names else -1
        index = (index + 1) % len(self.theme_names)
        self.theme = self.theme_names[index]
        self.notify(f"{self.theme} ({index + 1} of {len(self.theme_names)})", title="Theme")

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for action, (title, help_text) in self.ACTIONS.items():
            yield SystemCommand(title, help_text, getattr(self, f"action_{action}"))

"""What the editing (``e``) and compaction (``c``) panels share: a row of choices, a preview,
the write and close buttons, and the lines that say where the fork went."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Generic, TypeVar

from rich.text import Text
from textual import events, on, work
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Label, Select

from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.forks.transaction import (
    EDITING,
    Details,
    HeldSession,
    Loaded,
    Outcome,
    Preview,
    load,
)
from ctxtop.engine.live.session import UNATTRIBUTED
from ctxtop.engine.proxy.live_plan import LivePlan
from ctxtop.engine.sessions.cache_clock import CachedPrefix, action_timing, cache_clock
from ctxtop.engine.words import plural
from ctxtop.tui import format as fmt
from ctxtop.tui.components.sections_panel import TOKENIZER_DIFFERENCE
from ctxtop.tui.format import CLEARED_MARK
from ctxtop.tui.messages import CutPreviewed, LiveChanged

SHORT_SCREEN = 30  # lines: below this the panels' boxes get less room
D = TypeVar("D", bound=Details)  # the details of the kind of fork a panel previews


@dataclass(frozen=True, slots=True)
class Sample:
    """The dashboard's sample a panel previews (the frozen one while paused): how many bytes of
    the file it was read from and its gauge figure (tokens, provenance); the prefix the cache
    holds, its model and the app's clock, for the cache clock; the session's auto-compact point
    (the gauge's ``A``), for the strategies ``c`` compares."""

    upto: int | None = None
    shown: tuple[int, str] | None = None
    warm: CachedPrefix | None = None
    model: str | None = None
    clock: Callable[[], datetime] = datetime.now
    autocompact_at: int | None = None


def timing_text(sample: Sample, preview: Preview[Details], changes: bool) -> str:
    """Acting now or after the cache expires, which is cheaper (engine/sessions/cache_clock.py):
    ctxtop's estimate, marked; empty when no request cached anything or nothing ``changes``."""
    clock = cache_clock(sample.warm, sample.clock().timestamp(), sample.model)
    if clock is None or not changes:
        return ""
    saved = max(preview.context.before - preview.context.after, 0)
    return action_timing(clock, preview.cache.rewrite_cost_usd, saved) + fmt.mark("inferred")


def context_text(preview: Preview[Details]) -> Text:
    """The whole context before and after, the gauge's figure (``context.before``), and the
    parts: what the log holds (what a fork changes) and what it does not (system prompt,
    tools, the tokenizer's difference: the same in the fork)."""
    text = Text()
    context = preview.context
    before, after = context.before, context.after
    mark = fmt.mark(context.source)
    text.append(
        f"whole context {fmt.tokens(before)}{mark} -> {fmt.tokens(after)}{mark}", style="bold"
    )
    saving = before - after
    text.append(f" ({fmt.tokens(saving)} fewer)" if saving > 0 else " (no fewer)")
    text.append(" · the gauge's figure\n")
    counted = fmt.mark(preview.tokens_source)  # ~ with the session's tokenizer factor
    text.append(
        f"  of which in the log {fmt.tokens(preview.tokens_before)}{counted} ->"
        f" {fmt.tokens(preview.tokens_after)}{counted}"
    )
    outside = context.outside_log
    difference = before - preview.tokens_before
    if outside:
        # The gauge less what the log holds: the system prompt and tools with the tokenizer's
        # difference, the categories panel's row of that name (the sections' system prompt
        # row is a part of it).
        text.append(f", {UNATTRIBUTED} {fmt.tokens(outside)}*")
    elif difference < 0:
        # The agent counted less than ctxtop's estimate of what the log holds: the sections'
        # signed row of that name, so that the parts add up to the whole (the log's part
        # alone was larger than the whole).
        text.append(f", {TOKENIZER_DIFFERENCE} {fmt.signed_tokens(difference)}*")
    text.append("\n")
    return text


class ForkPanel(ModalScreen[Outcome[D] | None], Generic[D]):
    """Dismissed with the outcome of the written fork, or None. Each preview tells the app which
    tool calls it would change (``planned``), for the prompt tree. ``D``: the details of the
    kind of fork it previews.

    The session is loaded once, by the first preview (``prepared``): a copy of the dashboard's
    (``held``) when it is at the sample's bytes, else read from the file; every later preview
    works on those bytes and that state in memory (no disk read, the session's tokens counted
    once), and the fork written is the one previewed."""

    PLANNED_NOTE = f"{CLEARED_MARK} would clear"
    # The session's id when its requests go through ctxtop's proxy (set by the app): then
    # "Apply live" is offered beside "Write fork".
    live_session: str | None = None
    demo = False  # the demo's panel (set by the app): its forks are a preview, never logged
    # The session as the dashboard reads it (set by the app): the previews start from a copy of
    # it when it is at the sample's bytes, instead of reading the file's session again.
    held: HeldSession | None = None
    DOING = EDITING  # what the transaction is refused for when the agent cannot do it

    DEFAULT_CSS = """
    ForkPanel { align: center middle; }
    ForkPanel > Vertical {
        width: 100; max-width: 98%; height: auto; max-height: 98%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    ForkPanel .policy { height: auto; }
    ForkPanel .field { width: 1fr; height: auto; }
    ForkPanel .field Label { color: $foreground 70%; }
    ForkPanel Input, ForkPanel Select { width: 1fr; }
    /* The choices and the preview scroll; the buttons stay in view below them (at 80x24 a
       warning once pushed them off the screen, where Tab and Enter still reached them). */
    ForkPanel .panel-body { height: auto; max-height: 100%; }
    ForkPanel .buttons { height: auto; dock: bottom; align-horizontal: right; }
    /* Tab stops on the scrolling boxes too: say which one has the keys. */
    ForkPanel VerticalScroll:focus { border: round $accent !important; }
    ForkPanel Button { margin-left: 1; }
    """

    def __init__(self, path: Path, sample: Sample | None = None) -> None:
        super().__init__()
        self.path = path
        self.sample = sample or Sample()
        self.generation = 0  # of the newest preview: an older one that ends late is dropped
        self._outcome: Outcome[D] | None = None
        self.written: Outcome[D] | None = None
        self.preview: Preview[D] | None = None  # the last shown: what ``Write fork`` writes
        self._loaded: Loaded | None = None
        self._loading = threading.Lock()

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.height < SHORT_SCREEN, "short")

    def mark_short(self) -> None:
        """The ``short`` class under SHORT_SCREEN lines: less room for the boxes, no help text."""
        self.set_class(self.app.size.height < SHORT_SCREEN, "short")

    def show_timing(self, outcome: Outcome[D] | None) -> None:
        """The cache clock's advice on the panel's bottom border (no line of the preview: at
        80x24 the compaction panel has none to spare)."""
        words = ""
        if outcome is not None:
            words = timing_text(self.sample, outcome.preview, self.changes(outcome))
        self.query_one(Vertical).border_subtitle = fmt.in_markup(words)

    def prepared(self) -> Loaded:
        """The sample's bytes and session, loaded on the first call only (from a worker
        thread)."""
        with self._loading:
            if self._loaded is None:
                self._loaded = load(self.path, self.DOING, self.sample.upto, self.held)
            return self._loaded

    @property
    def outcome(self) -> Outcome[D] | None:
        """The last preview."""
        return self._outcome

    @outcome.setter
    def outcome(self, outcome: Outcome[D] | None) -> None:
        self._outcome = outcome
        if outcome is not None and self.written is None:
            note, ids = self.PLANNED_NOTE, self.planned(outcome)
            self.app.post_message(CutPreviewed(self.path, note, ids))
        ready = outcome is not None and self.live_ready(outcome)
        for button in self.query(".apply-live"):
            button.disabled = not ready

    def lines_since_sample(self) -> int:
        """Whole lines the agent appended after the sample previewed (the paused view's)."""
        upto = self.sample.upto
        if upto is None:
            return 0
        try:
            with self.path.open("rb") as handle:
                handle.seek(upto)
                return handle.read().count(b"\n")
        except OSError:
            return 0

    def written_message(self, outcome: Outcome[D]) -> Text:
        """What the panel says once the fork is written."""
        paused = bool(getattr(self.app, "paused", False))
        return written_text(outcome, self.demo, self.lines_since_sample(), paused)

    def planned(self, outcome: Outcome[D]) -> frozenset[str]:
        """The tool calls a preview would change (for the prompt tree)."""
        return frozenset()

    def changes(self, outcome: Outcome[D]) -> bool:
        """Whether the previewed fork changes anything (the cache clock advises on acting)."""
        return True

    def live_ready(self, outcome: Outcome[D]) -> bool:
        """Whether "Apply live" may put the preview in force."""
        return self.changes(outcome)

    @staticmethod
    def field(label: str, widget: Widget) -> Vertical:
        """One choice of the policy row: its label above its input."""
        return Vertical(Label(label), widget, classes="field")

    @classmethod
    def choices(cls, label: str, options: Sequence[str], value: str, widget_id: str) -> Vertical:
        """A field that picks one of ``options`` (never blank)."""
        select = Select([(o, o) for o in options], value=value, allow_blank=False, id=widget_id)
        return cls.field(label, select)

    @staticmethod
    def body() -> VerticalScroll:
        """What the buttons follow: the choices and the preview, scrolled when they do not
        fit. Not a Tab stop of its own (its focus would show nowhere): each of its fields and
        boxes scrolls into view when it takes the focus."""
        return VerticalScroll(classes="panel-body", can_focus=False)

    def buttons(self, prefix: str) -> Horizontal:
        """``#<prefix>-write`` (off until a preview is shown), ``#<prefix>-live`` when the
        session is proxied (off until a preview changes something) and ``#<prefix>-close``."""
        buttons = [Button("Write fork", variant="primary", id=f"{prefix}-write", disabled=True)]
        if self.live_session:
            live = Button("Apply live", id=f"{prefix}-live", classes="apply-live", disabled=True)
            buttons.append(live)
        buttons.append(Button("Close", id=f"{prefix}-close"))
        return Horizontal(*buttons, classes="buttons")

    def live_job(self) -> Callable[[], LivePlan] | None:
        """What "Apply live" runs (in a worker): the panel's choices as a live plan put in
        force; None while the choices are incomplete."""
        return None

    @on(Button.Pressed, ".apply-live")
    def _apply_live_pressed(self) -> None:
        job = self.live_job()
        if job is None:
            return
        for button in self.query(".apply-live"):
            button.disabled = True
        self._apply_live(job)

    @work(thread=True, exclusive=True, group="apply-live")
    def _apply_live(self, job: Callable[[], LivePlan]) -> None:
        try:
            plan = job()
        except CtxtopError as error:
            self.app.call_from_thread(self._live_failed, str(error))
            return
        self.app.call_from_thread(self._live_applied, plan)

    def _live_failed(self, problem: str) -> None:
        self.app.notify(
            fmt.shown(problem), title="Not applied live", severity="error", markup=False
        )

    def _live_applied(self, plan: LivePlan) -> None:
        self.app.post_message(LiveChanged(plan.session_id))
        self.app.notify(
            "from the next request the proxy sends the model the "
            + ("placeholders" if plan.kind == "edit" else "summary")
            + "; the agent's log keeps the originals. l stops it.",
            title=f"Applied live: {'edited' if plan.kind == 'edit' else 'compacted'}",
            timeout=10,
            markup=False,
        )
        self.dismiss(self.written)

    def lock_policy(self) -> None:
        """The fork is written: its choices can no longer change."""
        for field in self.query(".policy Input, .policy Select"):
            field.disabled = True


# The demo's forks go to its temporary folder, removed on quit: a preview of what a real
# session's Write fork does, with no resume command that could not work and no undo.
DEMO_FORK_NOTE = (
    "a preview: the demo's session is a replay in a temporary folder, removed on quit, so this"
    " fork cannot be resumed and is not in ctxtop's action log (nothing to undo); on a real"
    " session this says how to resume the fork and undo it"
)


def written_text(
    outcome: Outcome[Details], demo: bool = False, left_out: int = 0, paused: bool = False
) -> Text:
    """``left_out``: lines the agent wrote after the sample the panel previewed (the paused
    dashboard's): the fork, made from that sample, does not hold them."""
    text = Text()
    text.append("fork written: ", style="bold")
    text.append(f"{fmt.shown(str(outcome.fork))}\n")
    if left_out:
        when = "as shown when paused" if paused else "as shown"
        text.append(
            f"it holds the session {when}: the {plural(left_out, 'line')} the agent wrote"
            " since are not in it\n",
            style="bold",
        )
    if demo:
        text.append(DEMO_FORK_NOTE)
    else:
        if outcome.resume_command:
            text.append("resume with: ", style="bold")
            text.append(f"{fmt.shown(outcome.resume_command)}\n")
        text.append("undo with: ctxtop undo")
    for warning in outcome.warnings:
        text.append(f"\nwarning: {fmt.shown(warning)}", style="bold")
    return text

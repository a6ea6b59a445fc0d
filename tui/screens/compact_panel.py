"""``c``: the compaction panel: the summariser, the rounds kept verbatim, the summary as it will
be written, the tokens before and after and the cache cost, and the fork written on confirmation
(``engine/compaction``: the same as ``ctxtop compact``).

The preview runs in a worker thread, in memory on the session read for the first preview; the
LLM summariser may take seconds, so the panel shows how long it has waited and escape stops
waiting (the engine then falls back to the structured summary and says why). The fork written
is the one previewed, summary and all.

Below the figures, a table says when each known agent's strategy would fire on this session and
what it would do (``engine/agents/strategies.py``, as ``ctxtop compact --json`` gives it under
``policies``), with the distance in requests at the dashboard forecast's growth.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import Button, Input, Select, Static

from ctxtop.engine.agents.strategies import schedule, simulate
from ctxtop.engine.compaction.cut_table import cut_lines, requests_by_turn
from ctxtop.engine.compaction.items import Cut
from ctxtop.engine.config import LLMSettings
from ctxtop.engine.editing.preview import pays_off_after
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.forks.compact import (
    DEFAULT_KEEP_ROUNDS,
    SUMMARIZERS,
    CompactDetails,
    preview_compact,
    write_compact,
)
from ctxtop.engine.forks.transaction import COMPACTING, Outcome, Preview, unwritten
from ctxtop.engine.live.apply_plan import apply_compact
from ctxtop.engine.proxy.live_plan import LivePlan
from ctxtop.engine.words import plural
from ctxtop.tui import format as fmt
from ctxtop.tui.components.count_input import CountInput
from ctxtop.tui.screens.fork_panel import ForkPanel, Sample, context_text

TICK = 0.5  # seconds between updates of the waiting line


def figures_text(outcome: Outcome[CompactDetails]) -> Text:
    """Tokens before and after, the summariser used (and why not the one asked for), the cache
    cost: what ``ctxtop compact --dry-run`` says below the summary."""
    text = Text()
    preview = outcome.preview
    details, cache = preview.details, preview.cache
    text.append_text(context_text(preview))
    text.append(
        f"summary by {details.summarizer}: {fmt.tokens(details.summary_tokens)}≈ tokens"
        f" (budget {fmt.tokens(details.budget)})\n"
    )
    # Tokenizer estimates, as the context figures above: marked so. One line at 80 columns.
    rewrite = fmt.tokens(cache.rewrite_tokens) + fmt.mark(preview.tokens_source)
    text.append(f"cache rewrite: {rewrite} tokens once")
    if cache.rewrite_cost_usd is not None:
        text.append(f" (≈${cache.rewrite_cost_usd:.4f})")
        if cache.break_even_requests is not None:
            text.append(f"; {pays_off_after(cache.break_even_requests)}")
    else:
        text.append(" (no prices for this model)")
    if details.secrets_masked:
        text.append(f"\nsecrets masked: {details.secrets_masked}")
    for warning in outcome.warnings:  # the LLM's failure quotes the endpoint: plain text
        text.append(f"\nwarning: {fmt.shown(warning)}", style="bold")
    if details.refused:  # why Write fork is off
        text.append(f"\n{details.refused}", style="bold")
    return text


# What the words on the panel mean: a newcomer meets "rounds" here first.
ROUNDS_HELP = "round: a model reply + its tool calls · turn: a request + its rounds"


def cut_title(cut: Cut) -> str:
    """The rounds box's title: how many go and stay (and the request of a turn cut in two)."""
    title = (
        f"{plural(len(cut.summarised_rounds), 'round')} summarised, "
        f"{len(cut.kept_rounds)} kept verbatim"
    )
    return title + (" + the request of the turn cut" if cut.kept_request is not None else "")


def cut_text(details: CompactDetails) -> Text:
    """Which rounds of which turn are summarised and which kept (as ``ctxtop compact``)."""
    lines = cut_lines(details.round_table, requests_by_turn(details.cut), fmt.tokens)
    text = Text()
    for index, line in enumerate(lines):
        kept = "kept verbatim" in line
        text.append(("\n" if index else "") + fmt.shown(line), style="bold" if kept else "")
    return text


def distance_text(row: dict[str, Any]) -> str:
    away, requests = row["tokens_away"], row["requests_away"]
    if away is None:
        return "—"
    if away == 0:
        return "now"
    if requests is None:
        return fmt.tokens(away)
    count = f"{requests:,.0f}" if requests >= 10 else f"{requests:.1f}"
    return f"{fmt.tokens(away)} · ~{count} req"


def strategies_table(rows: list[dict[str, Any]]) -> Table:
    """Each strategy: fires at (tokens, % of the window), how far from now, what it would do."""
    table = Table(box=None, padding=(0, 1), pad_edge=False, expand=True)
    table.add_column("strategy", no_wrap=True)
    table.add_column("fires at", justify="right", no_wrap=True)
    table.add_column("from now", justify="right", no_wrap=True)
    table.add_column("does")
    for row in rows:
        at, share = row["at_tokens"], row["at_fraction"]
        fires_at = "—" if at is None else fmt.tokens(at)
        if share is not None:
            fires_at += f" {share * 100:.0f} %"
        table.add_row(
            row["label"],
            fires_at,
            distance_text(row),
            row["does"],
            style="bold" if row["fires"] else "",
        )
    return table


class CompactScreen(ForkPanel[CompactDetails]):
    DEFAULT_CSS = """
    CompactScreen > Vertical { height: 98%; max-height: 40; }
    /* The boxes below share what the buttons leave; past their least, the body scrolls. */
    CompactScreen .panel-body { height: 1fr; }
    CompactScreen #compact-figures { height: auto; }
    /* What the choices, figures and buttons leave. */
    CompactScreen #compact-summary-box { height: 1fr; min-height: 3; border: round $panel; }
    /* Shares the room with the summary; its six lines scroll when the screen is small. */
    CompactScreen #compact-strategies-box {
        height: 1fr; min-height: 3; max-height: 8; border: round $panel;
    }
    /* A line per turn and per run of rounds: usually three or four; scrolls beyond. */
    CompactScreen #compact-cut-box { height: auto; max-height: 6; border: round $panel; }
    /* Under 30 lines, two of them: the buttons must stay on screen at 80x24. */
    CompactScreen.short #compact-cut-box { max-height: 4; }
    """
    AUTO_FOCUS = "#compact-keep-rounds"
    PLANNED_NOTE = "◌ would summarise"
    DOING = COMPACTING
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Stop waiting / close")]

    def __init__(
        self,
        path: Path,
        llm: LLMSettings | None = None,
        growth: float | None = None,
        sample: Sample | None = None,
    ) -> None:
        """``growth``: the context's growth per request (the dashboard's forecast)."""
        super().__init__(path, sample)
        self.llm = llm
        self.growth = growth
        self.strategies: list[dict[str, Any]] | None = None  # the last preview's schedule
        self.cancel: threading.Event | None = None  # the running preview's, until it ends
        self.started = 0.0
        self.ticker: Timer | None = None

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            name = fmt.in_markup(fmt.short_name(self.path.name))  # fits at 80 columns
            box.border_title = f"Compact {name}: summarise old rounds into a fork"
            with self.body():
                with Horizontal(classes="policy"):
                    yield self.choices(
                        "summariser", SUMMARIZERS, "structured", "compact-summarizer"
                    )
                    yield self.field(
                        "keep rounds",
                        CountInput(
                            str(DEFAULT_KEEP_ROUNDS), type="integer", id="compact-keep-rounds"
                        ),
                    )
                yield Static("", id="compact-figures")
                with VerticalScroll(id="compact-cut-box") as scroll:
                    scroll.border_title = "rounds summarised and kept"
                    scroll.border_subtitle = ROUNDS_HELP
                    yield Static("", id="compact-cut")
                with VerticalScroll(id="compact-strategies-box") as scroll:
                    scroll.border_title = "when each agent would compact"
                    yield Static("", id="compact-strategies")
                with VerticalScroll(id="compact-summary-box") as scroll:
                    scroll.border_title = "summary as it will be written"
                    yield Static("", id="compact-summary")
            yield self.buttons("compact")

    def planned(self, outcome: Outcome[CompactDetails]) -> frozenset[str]:
        """The calls of the rounds the compaction would summarise."""
        rounds = outcome.preview.details.cut.summarised_rounds
        return frozenset(call.call_id for round_ in rounds for call in round_.calls)

    def live_ready(self, outcome: Outcome[CompactDetails]) -> bool:
        details = outcome.preview.details
        return bool(details.cut.summarised_rounds) and not details.refused

    def on_mount(self) -> None:
        self.mark_short()
        self.ticker = self.set_interval(TICK, self._tick, pause=True)
        self.refresh_preview()

    def choice(self) -> tuple[str, int] | None:
        """(summariser, rounds kept), or None while the rounds are not a number yet."""
        rounds = self.query_one("#compact-keep-rounds", Input).value.strip()
        if not rounds.isdigit():
            return None
        return str(self.query_one("#compact-summarizer", Select).value), int(rounds)

    def _say(self, text: str | Text) -> None:
        self.query_one("#compact-figures", Static).update(text)

    @on(Input.Changed)
    @on(Select.Changed)
    def refresh_preview(self) -> None:
        if self.written is not None:
            return
        self._stop_waiting()
        self.generation += 1
        self.outcome = None
        self.query_one("#compact-write", Button).disabled = True
        choice = self.choice()
        if choice is None:
            self._say("keep rounds: a number")
            return
        self.cancel = threading.Event()
        self.started = time.monotonic()
        self._tick()
        if self.ticker is not None:
            self.ticker.resume()
        self._preview(*choice, self.cancel, self.generation)

    def _tick(self) -> None:
        if self.cancel is None:
            return
        choice = self.choice()
        waited = time.monotonic() - self.started
        line = f"summarising with {choice[0] if choice else '?'} … {waited:.0f} s"
        if self.cancel.is_set():
            line = f"stopping: the structured summary instead … {waited:.0f} s"
        elif choice and choice[0] == "llm":
            line += " (esc: stop waiting, use the structured summary)"
        self._say(line)

    def _stop_waiting(self) -> None:
        if self.cancel is not None:
            self.cancel.set()
            self.cancel = None
        if self.ticker is not None:
            self.ticker.pause()

    @work(thread=True, group="compact-preview")
    def _preview(
        self, summarizer: str, keep_rounds: int, cancel: threading.Event, generation: int
    ) -> None:
        try:
            loaded = self.prepared()
            preview = preview_compact(
                loaded,
                summarizer=summarizer,
                keep_rounds=keep_rounds,
                llm=self.llm,
                cancel=cancel,
                shown=self.sample.shown,
            )
        except CtxtopError as error:
            self.app.call_from_thread(self._show_problem, str(error), generation)
            return
        simulation = None
        if loaded.state is not None:  # measured from the same figure as the gauge and above
            saving = preview.tokens_before - preview.tokens_after
            simulation = {
                **simulate(loaded.state, self.sample.autocompact_at, saving=saving),
                "fill_tokens": preview.context.before,
            }
        self.app.call_from_thread(self._show_preview, preview, generation, simulation)

    def _show_preview(
        self,
        preview: Preview[CompactDetails],
        generation: int,
        simulation: dict[str, Any] | None,
    ) -> None:
        if generation != self.generation or self.written is not None:
            return  # a newer choice is being previewed
        self._stop_waiting()
        self.preview = preview
        outcome = unwritten(preview, dry_run=True)
        details = preview.details
        self.outcome = outcome
        self._say(figures_text(outcome))
        self.show_timing(outcome)
        self.query_one("#compact-cut", Static).update(cut_text(details))
        self.query_one("#compact-cut-box").border_title = cut_title(details.cut)
        box = self.query_one("#compact-strategies-box")
        if simulation is None:
            self.strategies = None
            self.query_one("#compact-strategies", Static).update("not simulated for this format")
            box.border_subtitle = ""
        else:
            self.strategies = schedule(simulation, self.growth)
            self.query_one("#compact-strategies", Static).update(strategies_table(self.strategies))
            box.border_subtitle = (
                f"whole context now {fmt.tokens(simulation['fill_tokens'])}"
                f" of {fmt.tokens(simulation['window'])}"
            )
        self.query_one("#compact-summary", Static).update(fmt.plain(details.summary, lines=True))
        self.query_one("#compact-write", Button).disabled = bool(details.refused)

    def _show_problem(self, problem: str, generation: int) -> None:
        if generation == self.generation:
            self._stop_waiting()
            self._say(fmt.plain(fmt.about_file(problem, self.path), "bold"))

    @on(Button.Pressed, "#compact-write")
    def _write_pressed(self) -> None:
        if self.choice() is None or self.outcome is None or self.preview is None:
            return
        self.query_one("#compact-write", Button).disabled = True
        self._say("writing the fork …")
        self._write(self.preview)

    @work(thread=True, exclusive=True, group="compact-write")
    def _write(self, preview: Preview[CompactDetails]) -> None:
        try:
            outcome = write_compact(preview, logged=not self.demo)
        except CtxtopError as error:
            self.app.call_from_thread(self._show_problem, str(error), self.generation)
            return
        self.app.call_from_thread(self._show_written, outcome)

    def _show_written(self, outcome: Outcome[CompactDetails]) -> None:
        self.written = outcome
        self.show_timing(None)  # the advice was for acting; it is done
        text = figures_text(outcome)
        text.append("\n")
        # The warnings are in the figures above: not said twice.
        text.append_text(self.written_message(dataclasses.replace(outcome, warnings=())))
        self._say(text)
        # Where the fork went and how to resume it need the room the preview's rounds had.
        self.query_one("#compact-cut-box").display = False
        summary = outcome.preview.details.summary
        self.query_one("#compact-summary", Static).update(fmt.plain(summary, lines=True))
        self.lock_policy()

    def live_job(self) -> Callable[[], LivePlan] | None:
        choice, session, preview = self.choice(), self.live_session, self.preview
        if choice is None or session is None or self.outcome is None or preview is None:
            return None
        return lambda: apply_compact(self.path, session, preview)[0]  # the summary shown

    @on(Button.Pressed, "#compact-close")
    def _close_pressed(self) -> None:
        self._stop_waiting()
        self.dismiss(self.written)

    def action_close(self) -> None:
        """Escape: while the LLM is being waited for, stop waiting; else close."""
        choice, cancel = self.choice(), self.cancel
        waiting = cancel is not None and not cancel.is_set()
        if waiting and cancel is not None and choice is not None and choice[0] == "llm":
            cancel.set()  # the engine answers with the structured summary and the reason
            self._say("stopping: the structured summary instead …")
            return
        self._stop_waiting()
        self.dismiss(self.written)

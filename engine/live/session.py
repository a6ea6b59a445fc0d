"""``LiveSession``: a session file followed incrementally, one ``LiveView`` per change.

Each update takes one ``Sample`` of the session (engine/sessions/sample.py, counted with the
session's ``Ledger``) and makes it the ``LiveView`` the dashboard shows (``build_view``; the
types are in view.py), with the last analysis of it."""

from __future__ import annotations

import copy
import dataclasses
import threading
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path

from ctxtop.engine.agents import profile_of, written
from ctxtop.engine.agents.session_reader import SessionReader
from ctxtop.engine.analysis.analyze import Analyzer
from ctxtop.engine.analysis.profiles import load_profile
from ctxtop.engine.analysis.prompt_outline import Outliner
from ctxtop.engine.analysis.report import analyze_session
from ctxtop.engine.config import Thresholds
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.live.own_actions import ActionWatch
from ctxtop.engine.live.proxied_view import with_measured
from ctxtop.engine.live.view import (
    CategoryRow,
    Event,
    Gauge,
    LastRequest,
    LiveView,
    SubagentRow,
    ToolRow,
)
from ctxtop.engine.live.whole import (
    compaction_after,
    outside_log,
    whole_after_compaction,
)
from ctxtop.engine.proxy.opening import session_opening
from ctxtop.engine.sessions.ledger import Ledger
from ctxtop.engine.sessions.limits import trigger_points
from ctxtop.engine.sessions.model import Compaction, Microcompaction, SessionState
from ctxtop.engine.sessions.sample import Sample, build_sample
from ctxtop.engine.tokens.short import provenance_mark, short_tokens
from ctxtop.engine.words import plural


@dataclass(frozen=True, slots=True)
class AnalysisChoice:
    """What the analysis assumes: a layout profile by name (None: the settings' or the agent's
    own) and a what-if window in tokens (None: the model's own)."""

    profile: str | None = None
    window: int | None = None


class LiveSession:
    """Reads only what was appended on each ``poll``; ``view()`` is the current sample.

    One session file is read by one ``LiveSession``, shared by the dashboard's feed and the
    sessions table (one copy of the session in memory, its bytes read once): whoever uses it
    holds ``lock``, and ``generation`` (counting the polls that read something) tells each user
    whether the other read something since it last looked."""

    def __init__(
        self,
        path: str | Path,
        thresholds: Thresholds | None = None,
        *,
        default_profile: str | None = None,
        analysis: bool = True,
    ) -> None:
        self.path = Path(path)
        self.reader = SessionReader(self.path)
        self.thresholds = thresholds or Thresholds()
        self.default_profile = default_profile
        self.analysis = analysis
        # The token counts of the session, kept between updates (never in the session model).
        self.ledger = Ledger()
        self.analyzer = Analyzer(ledger=self.ledger)  # keeps simulations between updates
        self.outliner = Outliner()  # keeps the labels of messages seen before
        self.decided = DecidedCompactions()  # the compactions' figures, decided once
        self._last: LiveView | None = None  # the last analysed view
        self.actions = ActionWatch(self.path)
        self.outside_log: int | None = None  # system prompt, tools: as the last request had them
        self.lock = threading.RLock()
        self.generation = 0
        # A paused dashboard's sample (bytes) and, once the reader was about to read past it,
        # a copy of the session there (``keep_at``, ``state_at``).
        self._paused: tuple[int, SessionState | None] | None = None

    def poll(self) -> bool:
        """Apply what was appended (all of it); True when the view may have changed."""
        self._keep_paused()
        changed = False
        while self.reader.poll():  # companions found on one poll are read by the next
            changed = True
        if changed:
            self.generation += 1
        return changed

    def view(self, choice: AnalysisChoice | None = None) -> LiveView | None:
        """The current sample with its analysis, or None while the file is empty or not a
        known format."""
        view = self.figures()
        return None if view is None else self.analysed(view, choice)

    def figures(self) -> LiveView | None:
        """The current sample without a new analysis (it carries the last one, if any): the
        figures cost milliseconds, the analysis of a long context much more."""
        adapter = self.reader.adapter
        if adapter is None:
            return None
        sample = build_sample(adapter, self.ledger, breakdown=True)
        self.outside_log = outside_log(None, sample, self.outside_log)
        last = self._last
        analysis = last.analysis if last is not None else None
        outside = outside_log(analysis, earlier=self.outside_log)
        view = build_view(sample, self.thresholds, outside, self.decided)
        view = dataclasses.replace(view, last_write=self.reader.last_written())
        actions = self.actions.events()
        if actions:
            view = dataclasses.replace(view, events=view.events + actions)
        last = self._last
        if last is None:
            return view
        return dataclasses.replace(
            view,
            analysis=last.analysis,
            outline=last.outline,
            analysis_error=last.analysis_error,
            measured=last.measured,
            # A proxied session's context by kind is the measured request's (read on analysis).
            categories=last.categories if last.measured is not None else view.categories,
        )

    def analysed(self, view: LiveView, choice: AnalysisChoice | None = None) -> LiveView:
        """``view`` with the analysis of the current state for ``choice``."""
        adapter = self.reader.adapter
        if not self.analysis or adapter is None:
            return view
        state = adapter.snapshot()
        choice = choice or AnalysisChoice()
        try:
            name = choice.profile or self.default_profile or profile_of(state.agent)
            analysis = analyze_session(
                adapter,
                profile=name,
                window=choice.window,
                triggers=self.thresholds,
                analyzer=self.analyzer,
            )
            outline = self.outliner.outline(
                state, load_profile(name), analysis, self.ledger.counted
            )
            view = dataclasses.replace(
                view, analysis=analysis, outline=outline, analysis_error=None
            )
        except CtxtopError as error:  # e.g. a user's profile file that does not parse
            view = dataclasses.replace(view, analysis=None, outline=None, analysis_error=str(error))
        view = with_measured(view, session_opening(state))
        view = _with_compaction_afters(view, outside_log(view.analysis), self.decided)
        self._last = view
        return view

    def state_at(self, upto: int | None) -> SessionState | None:
        """A copy of the session as read so far, for a fork's preview (``load`` in
        engine/forks/transaction.py), taken under ``lock`` (the feed does not read meanwhile):
        the main session only, its sub-agents' windows are no part of a fork. Past ``upto``
        bytes: the copy kept there for a paused dashboard (``keep_at``), else None (a sample
        the agent wrote after). None for a session in a database (its rows are no bytes of a
        file)."""
        with self.lock:
            adapter = self.reader.adapter
            if adapter is None or self.reader.stored:
                return None
            state = adapter.snapshot()
            if upto is None or state.bytes_read == upto:
                return _copied(state)
            paused = self._paused
            kept = paused[1] if paused is not None else None
            return kept if kept is not None and kept.bytes_read == upto else None

    def keep_at(self, upto: int | None) -> None:
        """A dashboard paused at ``upto`` bytes (None: running again): before the reader
        reads past them, a copy of the session there is kept for its panels (``state_at``).
        Called from the app's thread: no lock waited for (the feed may hold it a while)."""
        self._paused = None if upto is None else (upto, None)

    def _keep_paused(self) -> None:
        paused = self._paused
        adapter = self.reader.adapter
        if paused is None or paused[1] is not None or adapter is None or self.reader.stored:
            return
        state = adapter.snapshot()
        if state.bytes_read == paused[0] and self.size() > state.bytes_read:
            kept = _copied(state)
            if self._paused is paused:  # (not resumed meanwhile)
                self._paused = (paused[0], kept)

    @property
    def error(self) -> str | None:
        return self.reader.error

    def size(self) -> int:
        try:
            return written(self.path)[1]
        except OSError:
            return 0


def _copied(state: SessionState) -> SessionState:
    """A copy of the main session no reader changes (its sub-agents' windows left out)."""
    return copy.deepcopy(state, {id(state.subagents): {}})


# --- the sample as the dashboard shows it ------------------------------------------------


def _tools(sample: Sample) -> tuple[ToolRow, ...]:
    total = sum(tool.result_tokens for tool in sample.tools)
    return tuple(
        ToolRow(
            tool.name, tool.calls, tool.result_tokens, tool.result_tokens / total if total else 0.0
        )
        for tool in sample.tools
    )


# What the log cannot show (system prompt, tool definitions, message framing).
UNATTRIBUTED = "not in the log"
# The system prompt and tools when the log records their text (Claude Code 2.1.33x).
LOGGED_PROMPT = "system prompt + tools"


def _categories(sample: Sample) -> tuple[CategoryRow, ...]:
    breakdown = sample.breakdown
    if breakdown is None:
        return ()
    rows = [
        CategoryRow(entry.name.replace("_", " "), entry.tokens, "estimated")
        for entry in breakdown.categories
        if entry.tokens > 0
    ]
    logged = min(breakdown.logged_prompt, breakdown.outside_log)
    if logged:
        rows.append(CategoryRow(LOGGED_PROMPT, logged, "logged"))
    if breakdown.outside_log - logged:
        rows.append(CategoryRow(UNATTRIBUTED, breakdown.outside_log - logged, "inferred"))
    return tuple(sorted(rows, key=lambda row: -row.tokens))


def _subagents(sample: Sample) -> tuple[SubagentRow, ...]:
    return tuple(
        SubagentRow(
            name=sub.description or sub.id or "sub-agent",
            requests=sub.api_requests,
            tokens=sub.context.value,
            source=sub.context.source,
        )
        for sub in sample.subagents
    )


def _last_request(sample: Sample) -> LastRequest | None:
    last = sample.last_request
    if last is None:
        return None
    usage = last.usage
    return LastRequest(
        usage.input_tokens_total,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
        usage.output_tokens,
    )


def _compaction_event(item: Compaction) -> Event:
    after = item.after_tokens if item.after_tokens is not None else item.post_tokens
    mark = provenance_mark(item.after_source())
    return Event(
        "compaction",
        item.line,
        f"{item.trigger} compaction: {short_tokens(item.pre_tokens)} -> {mark}"
        f"{short_tokens(after)}",
        item.timestamp,
    )


def _microcompaction_event(item: Microcompaction) -> Event:
    """The agent's own figures: the context before, and what clearing the results saved."""
    cleared = plural(item.cleared_results, "tool result")
    if item.cleared_attachments:
        cleared += f", {plural(item.cleared_attachments, 'attachment')}"
    return Event(
        "microcompaction",
        item.line,
        f"{item.trigger} microcompaction: {short_tokens(item.pre_tokens)},"
        f" {short_tokens(item.tokens_saved)} saved ({cleared} cleared)",
        item.timestamp,
    )


def _decided(items: tuple[Compaction, ...], outside_log: int | None) -> tuple[Compaction, ...]:
    return tuple(
        dataclasses.replace(item, after_tokens=compaction_after(item, outside_log))
        for item in items
    )


class DecidedCompactions:
    """A live session's settled compactions (all but the newest, which a reader may still
    complete) as sampled, the same with their "after" as first decided, and their events: a
    past event's figures are decided once, whatever the system prompt's figure does later, and
    an update makes the newest compaction's event only."""

    def __init__(self) -> None:
        self._settled: tuple[Compaction, ...] = ()
        self._decided: tuple[Compaction, ...] = ()
        self._events: list[Event] = []

    def decide(
        self, sample: Sample, outside_log: int | None
    ) -> tuple[tuple[Compaction, ...], list[Event]]:
        """The sample's compactions with their "after", and their events: the settled ones as
        decided when they were first seen settled, the newest with ``outside_log``."""
        compactions = sample.compactions
        settled = compactions[:-1]
        if self._settled != settled[: len(self._settled)]:
            self._settled, self._decided, self._events = (), (), []
        if len(self._settled) != len(settled):
            added = _decided(settled[len(self._settled) :], outside_log)
            self._events = self._events + [_compaction_event(item) for item in added]
            self._settled, self._decided = settled, self._decided + added
        newest = _decided(compactions[-1:], outside_log)
        return self._decided + newest, [
            *self._events,
            *(_compaction_event(item) for item in newest),
        ]


def _with_compaction_afters(
    view: LiveView, outside_log: int | None, decided: DecidedCompactions
) -> LiveView:
    """``view`` with its compactions' "after" (and their events) from ``outside_log``: the
    system prompt of the analysis just made, as ``ctxtop report`` adds it."""
    if not view.sample.compactions or outside_log is None:
        return view
    compactions, made = decided.decide(view.sample, outside_log)
    by_line = {event.line: event for event in made}
    events = tuple(
        by_line.get(event.line, event) if event.kind == "compaction" else event
        for event in view.events
    )
    sample = dataclasses.replace(view.sample, compactions=compactions)
    return dataclasses.replace(view, events=events, sample=sample)


def _events(sample: Sample, compactions: list[Event]) -> tuple[Event, ...]:
    events = list(compactions)
    events.extend(_microcompaction_event(item) for item in sample.microcompactions)
    events.extend(
        Event(
            "truncation",
            item.line,
            f"truncation: {short_tokens(item.pre_tokens)} -> {short_tokens(item.post_tokens)}"
            f" ({item.messages_removed if item.messages_removed is not None else '?'}"
            " oldest messages dropped, nothing summarised)",
            item.timestamp,
        )
        for item in sample.truncations
    )
    events.extend(
        Event("skipped", item.line, f"skipped line {item.line}: {item.reason}")
        for item in sample.skipped
    )
    events.sort(key=attrgetter("line"))
    return tuple(events)


def build_view(
    sample: Sample,
    thresholds: Thresholds,
    outside: int | None = None,
    decided: DecidedCompactions | None = None,
) -> LiveView:
    """``outside``: the part of the context the log does not show (``outside_log``), for the
    compactions' "after" and the whole context right after one, as ``ctxtop report`` adds it
    (None: the sample's own figure); ``decided``: the compactions' figures decided by the
    session's earlier views (None: none)."""
    if outside is None:
        outside = outside_log(None, sample)
    decided = decided or DecidedCompactions()
    compactions, compaction_events = decided.decide(sample, outside)
    sample = dataclasses.replace(sample, compactions=compactions)
    sample = whole_after_compaction(sample, outside)
    window = sample.window.tokens
    points = trigger_points(window, thresholds)
    gauge = Gauge(
        tokens=sample.context.value,
        window=window,
        source=sample.context.source,
        window_source=sample.window.source,
        editing_at=points.editing_at,
        compaction_at=points.compaction_at,
        autocompact_at=sample.autocompact_at,
    )
    return LiveView(
        agent=sample.agent,
        model=sample.model,
        session_id=sample.session_id,
        title=sample.title,
        file=sample.file,
        last_activity=sample.last_activity,
        gauge=gauge,
        history=sample.history,
        tools=_tools(sample),
        categories=_categories(sample),
        subagents=_subagents(sample),
        last_request=_last_request(sample),
        events=_events(sample, compaction_events),
        api_requests=sample.api_requests,
        lines_read=sample.lines_read,
        bytes_read=sample.bytes_read,
        sample=sample,
    )

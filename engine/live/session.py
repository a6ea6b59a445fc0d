"""``LiveSession``: a session file followed incrementally, one ``LiveView`` per change."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from engine.agents import profile_of
from engine.agents.session_reader import SessionReader
from engine.analysis.analyze import Analyzer
from engine.analysis.profiles import load_profile
from engine.analysis.prompt_outline import Outliner
from engine.analysis.report import analyze_session
from engine.config import Thresholds
from engine.errors import CtxtopError
from engine.live.actions import ActionWatch
from engine.live.measured import with_measured
from engine.live.view import LiveView, build_view
from engine.sessions.ledger import Ledger
from engine.sessions.sample import build_sample


@dataclass(frozen=True, slots=True)
class AnalysisChoice:
    """What the analysis assumes: a layout profile by name (None: the settings' or the agent's
    own) and a what-if window in tokens (None: the model's own)."""

    profile: str | None = None
    window: int | None = None


class LiveSession:
    """Reads only what was appended on each ``poll``; ``view()`` is the current sample."""

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
        self._last: LiveView | None = None  # the last analysed view
        self.actions = ActionWatch(self.path)
        self.outside_log: int | None = None  # system prompt, tools: as the last request had them

    def poll(self) -> bool:
        """Apply what was appended (all of it); True when the view may have changed."""
        changed = False
        while self.reader.poll():  # companions found on one poll are read by the next
            changed = True
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
        if sample.breakdown is not None and sample.context.source in ("reported", "calibrated"):
            self.outside_log = sample.breakdown.unattributed
        view = build_view(sample, self.thresholds, self._outside_log())
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

    def _outside_log(self) -> int | None:
        """The system prompt and tools: the sections' figure when there is an analysis (so the
        gauge after a compaction is the sections' sum), else the last request's."""
        analysis = self._last.analysis if self._last is not None else None
        for section in analysis.sections if analysis is not None else ():
            if section.name == "system" and section.provenance in ("inferred", "measured"):
                return section.tokens
        return self.outside_log

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
        view = with_measured(view)
        self._last = view
        return view

    @property
    def error(self) -> str | None:
        return self.reader.error

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError:
            return 0

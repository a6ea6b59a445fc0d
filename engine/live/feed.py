"""The live loop: a feed that follows the session file (in a thread the caller runs) and hands
each coalesced update to one callback.

The feed reads only appended bytes (``LiveSession.poll``), builds the new ``LiveView`` (figures,
analysis, prompt tree) and keeps it in a one-slot mailbox; a ``Sampled`` event is handed on only
when the previous one was taken (``take``), so a burst of appends becomes one update carrying the
newest sample. A new analysis choice (profile, what-if window) is applied by ``refresh`` in
another thread; one lock keeps the reader and the analyzer to one thread at a time. The events
are plain data: the dashboard turns them into its messages (``tui/live_feed.py``).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ctxtop.engine.files import open_regular
from ctxtop.engine.live.session import AnalysisChoice, LiveSession
from ctxtop.engine.live.view import LiveView
from ctxtop.engine.live.watch import wake_ups


@dataclass(frozen=True, slots=True)
class Sampled:
    """A new sample is waiting: ``take`` it (the newest, if more came meanwhile)."""

    view: LiveView


@dataclass(frozen=True, slots=True)
class Progress:
    """The first read of a big file: bytes read so far of the file's size."""

    done: int
    total: int


@dataclass(frozen=True, slots=True)
class Problem:
    """The file cannot be read, is not a session log of any supported agent (yet), or a sample
    could not be built; the feed goes on following."""

    text: str


@dataclass(frozen=True, slots=True)
class Stale:
    """What happened to the file since the last sample (gone, unreadable, truncated and
    waiting), or "" once new data has arrived."""

    reason: str


FeedEvent = Sampled | Progress | Problem | Stale

PROGRESS_INTERVAL = 0.1
ANALYSIS_MAX_AGE = 2.0  # seconds the analysis may lag the figures while the agent writes


class Feed:
    """Follows ``session``; ``run`` is the body of a thread, ``stop`` ends it."""

    def __init__(
        self,
        session: LiveSession,
        post: Callable[[FeedEvent], object],
        *,
        poll_interval: float = 0.5,
        use_watchfiles: bool = True,
        choice: AnalysisChoice | None = None,
    ) -> None:
        self.session = session
        self.choice = choice or AnalysisChoice()
        self._session_lock = session.lock  # shared with the sessions table's use of it
        self._generation = -1  # the session's generation last sampled
        self._post = post
        self.poll_interval = poll_interval
        self._stale = ""  # what the app was last told of the file ("": all well)
        self.use_watchfiles = use_watchfiles
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._latest: LiveView | None = None
        self._waiting = False  # a Sampled is handed on and not yet taken
        self.loaded = threading.Event()
        self._shown: LiveView | None = None  # the last view published with its analysis
        self._analysed_at = 0.0  # time.monotonic() of that analysis

    def take(self) -> LiveView | None:
        """The newest sample (called by the consumer on ``Sampled``)."""
        with self._lock:
            view, self._latest = self._latest, None
            self._waiting = False
            return view

    def publish(self, view: LiveView) -> None:
        with self._lock:
            self._latest = view
            if self._waiting:
                return
            self._waiting = True
        self._post(Sampled(view))

    def _report_progress(self) -> None:
        """While the first read runs, post how far it got (the reader updates bytes_read)."""
        total = self.session.size()
        while not self.loaded.wait(PROGRESS_INTERVAL):
            adapter = self.session.reader.adapter
            done = adapter.state.bytes_read if adapter is not None else 0
            if not self.loaded.is_set():
                self._post(Progress(done, total))

    def _wait_for_format(self) -> bool:
        """Poll until the file is a known session log (an empty demo file fills up)."""
        told = False
        while not self.stop.is_set():
            with self._session_lock:
                self.session.poll()
            if self.session.reader.adapter is not None:
                return True
            if not told:
                told = True
                self._post(Problem(self._problem()))
            self.stop.wait(self.poll_interval)
        return False

    def sample(self, figures: bool = True) -> None:
        """Publish the new figures at once, then again with their analysis (which may take a
        while on a long context); the session lock is held. ``figures`` False: only the
        analysis changed.

        While the agent is still writing (more bytes than were read), the analysis waits for the
        next sample, up to ``ANALYSIS_MAX_AGE``: the new fill is never queued behind it."""
        try:
            if figures or self._shown is None:
                self._generation = self.session.generation
            view = self.session.figures() if figures or self._shown is None else self._shown
            self.loaded.set()
            if view is None:
                return
            if figures:
                self.publish(view)
                recent = time.monotonic() - self._analysed_at < ANALYSIS_MAX_AGE
                if recent and self._more_written():
                    return
            self._shown = view = self.session.analysed(view, self.choice)
            self._analysed_at = time.monotonic()
            self.publish(view)
        except Exception as error:  # a live monitor says so and keeps following
            self._post(Problem(f"cannot build the report: {error!r}"))
        finally:
            self.loaded.set()

    def _unseen(self) -> bool:
        """The session read something since the last sample (the sessions table polled it)."""
        return self.session.generation != self._generation

    def _more_written(self) -> bool:
        adapter = self.session.reader.adapter
        if adapter is None or not self.session.path.is_file():
            return False
        return self.session.size() > adapter.state.bytes_read

    def refresh(self, choice: AnalysisChoice) -> None:
        """Analyse again with ``choice`` (the body of a thread worker; waits for the feed)."""
        self.choice = choice
        with self._session_lock:
            if self.session.reader.adapter is not None and not self.stop.is_set():
                self.sample(figures=False)

    def run(self) -> None:
        """Follow until ``stop`` is set (the body of a thread worker)."""
        watcher = threading.Thread(target=self._report_progress, daemon=True)
        watcher.start()
        reader = self.session.reader
        try:
            if not self._wait_for_format():
                return
            with self._session_lock:
                self.session.poll()  # what came since the format was known
                self.sample()
            for _ in wake_ups(reader, self.stop, self.poll_interval, self.use_watchfiles):
                if self.stop.is_set():
                    return
                with self._session_lock:
                    # Only what was appended is read (here, or by the sessions table sharing the
                    # session); an action ctxtop took (ctxtop edit in another terminal) shows
                    # without waiting for the agent's next line.
                    self.session.poll()  # a read moves the generation: unseen then
                    if self._unseen() or self.session.actions.changed():
                        self.sample()
                    self._say_staleness()
        finally:
            self.loaded.set()

    def _say_staleness(self) -> None:
        """Tell the app when the figures on screen stop being the file's, and when they are
        again (posted only on a change). The tailer takes a missing file as nothing new, so the
        file itself is looked at (for a session in a database, what its last read said)."""
        try:
            if self.session.reader.stored:
                if self.session.reader.error is not None:
                    raise OSError(0, self.session.reader.error)
            else:
                os.close(open_regular(self.session.path))
            reason = ""
        except FileNotFoundError:
            reason = "file gone"
        except OSError as error:
            reason = f"file unreadable ({error.strerror or error})"
        if not reason and self.session.reader.adapter is None:
            reason = "file truncated: waiting for the agent to write"
        if reason != self._stale:
            self._stale = reason
            self._post(Stale(reason))

    def _problem(self) -> str:
        if self.session.error:
            return f"{self.session.path}: {self.session.error}"
        if self.session.size() == 0:
            return f"{self.session.path}: empty so far, waiting for the agent to write"
        return f"{self.session.path}: not a session log of any supported agent (yet)"

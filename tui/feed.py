"""The feed: a worker thread that follows the session file and posts coalesced updates.

The thread reads only appended bytes (``LiveSession.poll``), builds the new ``LiveView`` and keeps
it in a one-slot mailbox; a ``SessionUpdated`` message is posted only when the previous one was
taken, so a burst of appends becomes one screen update carrying the newest sample.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from textual.message import Message

from engine.live.session import LiveSession
from engine.live.view import LiveView
from engine.sessions.watch import follow
from tui.messages import FeedProblem, LoadProgress, SessionUpdated

PROGRESS_INTERVAL = 0.1


class Feed:
    def __init__(
        self,
        session: LiveSession,
        post: Callable[[Message], object],
        *,
        poll_interval: float = 0.5,
        use_watchfiles: bool = True,
    ) -> None:
        self.session = session
        self._post = post
        self.poll_interval = poll_interval
        self.use_watchfiles = use_watchfiles
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._latest: LiveView | None = None
        self._waiting = False  # a SessionUpdated is posted and not yet taken
        self.loaded = threading.Event()

    def take(self) -> LiveView | None:
        """The newest sample (called by the UI on ``SessionUpdated``)."""
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
        self._post(SessionUpdated(view))

    def _report_progress(self) -> None:
        """While the first read runs, post how far it got (the reader updates bytes_read)."""
        total = self.session.size()
        while not self.loaded.wait(PROGRESS_INTERVAL):
            adapter = self.session.reader.adapter
            done = adapter.state.bytes_read if adapter is not None else 0
            if not self.loaded.is_set():
                self._post(LoadProgress(done, total))

    def _wait_for_format(self) -> bool:
        """Poll until the file is a known session log (an empty demo file fills up)."""
        told = False
        while not self.stop.is_set():
            self.session.poll()
            if self.session.reader.adapter is not None:
                return True
            if not told:
                told = True
                self._post(FeedProblem(self._problem()))
            self.stop.wait(self.poll_interval)
        return False

    def run(self) -> None:
        """Follow until ``stop`` is set (the body of a thread worker)."""
        watcher = threading.Thread(target=self._report_progress, daemon=True)
        watcher.start()
        try:
            if not self._wait_for_format():
                return
            for _ in follow(
                self.session.reader,
                stop=self.stop,
                poll_interval=self.poll_interval,
                use_watchfiles=self.use_watchfiles,
            ):
                try:
                    view = self.session.view()
                except Exception as error:  # a live monitor says so and keeps following
                    view = None
                    self._post(FeedProblem(f"cannot build the report: {error!r}"))
                self.loaded.set()
                if view is not None:
                    self.publish(view)
        finally:
            self.loaded.set()

    def _problem(self) -> str:
        if self.session.error:
            return f"{self.session.path}: {self.session.error}"
        if self.session.size() == 0:
            return f"{self.session.path}: empty so far, waiting for the agent to write"
        return f"{self.session.path}: not a session log of any supported agent (yet)"

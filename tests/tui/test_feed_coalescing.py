"""The feed coalesces bursts: one message until the UI takes the newest sample."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TypeVar

from dashboard_support import write_lines
from textual.message import Message

from ctxtop.engine.live.session import LiveSession
from ctxtop.engine.live.view import LiveView
from ctxtop.tui.live_feed import Feed
from ctxtop.tui.messages import FeedProblem, SessionUpdated


def test_a_burst_of_samples_is_one_message_carrying_the_newest(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    live = LiveSession(session)
    posted: list[Message] = []
    feed = Feed(live, posted.append)
    views = []
    for start in (0, 30, 40):
        write_lines(session, 10 if start else 30, start=start)
        live.poll()
        view = live.view()
        assert view is not None
        views.append(view)
        feed.publish(view)
    assert len(posted) == 1 and isinstance(posted[0], SessionUpdated)
    assert feed.take() is views[-1]  # the UI gets the newest, not the first
    assert feed.take() is None
    feed.publish(views[0])
    assert len(posted) == 2  # taken: the next sample is a new message


class FailingOnce(LiveSession):
    """A session whose first report fails, as an engine bug on one odd record would."""

    failed = False

    def figures(self) -> LiveView | None:
        if not self.failed:
            self.failed = True
            raise ValueError("odd record")
        return super().figures()


def test_a_failing_report_is_reported_and_following_goes_on(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    write_lines(session, 30)
    posted: list[Message] = []
    feed = Feed(FailingOnce(session), posted.append, poll_interval=0.02, use_watchfiles=False)
    worker = threading.Thread(target=feed.run)
    worker.start()
    try:
        problem = next_message(posted, FeedProblem)
        assert "odd record" in problem.text
        write_lines(session, 10, start=30)
        update = next_message(posted, SessionUpdated)
        assert update.view.lines_read == 40
    finally:
        feed.stop.set()
        worker.join()


M = TypeVar("M", bound=Message)


def next_message(posted: list[Message], kind: type[M]) -> M:
    """The first message of ``kind`` posted (waits for it, with a safety limit)."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        found = [message for message in posted if isinstance(message, kind)]
        if found:
            return found[0]
        time.sleep(0.01)
    raise AssertionError(f"no {kind.__name__} was posted")


def test_the_analysis_waits_while_the_agent_is_still_writing(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    live = LiveSession(session)
    posted: list[Message] = []
    feed = Feed(live, posted.append)
    write_lines(session, 30)
    live.poll()
    feed.sample()
    first = feed.take()
    assert first is not None and first.analysis is not None
    write_lines(session, 10, start=30)
    live.poll()
    write_lines(session, 10, start=40)  # written while the feed was busy: not read yet
    feed.sample()
    figures = feed.take()
    assert figures is not None and figures.lines_read == 40
    assert figures.analysis is first.analysis  # the new fill at once, the analysis later
    live.poll()
    feed.sample()  # nothing more written: the analysis follows
    analysed = feed.take()
    assert analysed is not None and analysed.lines_read == 50
    assert analysed.analysis is not None and analysed.analysis is not first.analysis
    assert len(analysed.analysis.history) > len(first.analysis.history)

"""The feed coalesces bursts: one message until the UI takes the newest sample."""

from __future__ import annotations

from pathlib import Path

from dashboard_support import write_lines
from textual.message import Message

from engine.live.session import LiveSession
from tui.feed import Feed
from tui.messages import SessionUpdated


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

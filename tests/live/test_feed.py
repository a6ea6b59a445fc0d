"""The live loop runs in the engine, without Textual: a feed following a session hands plain
events to a callback (the first sample, then the newest of each burst; a file that goes away)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from opencode_db import load_sample, writer

from ctxtop.engine.live.demo import demo_lines
from ctxtop.engine.live.feed import Feed, FeedEvent, Sampled, Stale
from ctxtop.engine.live.session import LiveSession
from ctxtop.engine.live.view import LiveView


def _append(path: Path, start: int, count: int) -> None:
    with path.open("ab") as out:
        out.write(b"".join(demo_lines()[start : start + count]))


def _wait(events: list[FeedEvent], found: Callable[[FeedEvent], bool]) -> FeedEvent:
    deadline = time.monotonic() + 30  # a safety limit on a loaded machine, not a timing assert
    while time.monotonic() < deadline:
        for event in list(events):
            if found(event):
                return event
        time.sleep(0.01)
    raise AssertionError("the feed never handed on the expected event")


@contextlib.contextmanager
def following(
    session: Path, *, use_watchfiles: bool = False
) -> Iterator[tuple[list[FeedEvent], list[LiveView]]]:
    """A feed following ``session`` in a thread: its events, and the views taken from them as
    the dashboard takes them (the newest sample)."""
    events: list[FeedEvent] = []
    taken: list[LiveView] = []

    def handle(event: FeedEvent) -> None:
        view = feed.take() if isinstance(event, Sampled) else None
        if view is not None:
            taken.append(view)
        events.append(event)

    feed = Feed(LiveSession(session), handle, poll_interval=0.02, use_watchfiles=use_watchfiles)
    worker = threading.Thread(target=feed.run)
    worker.start()
    try:
        yield events, taken
    finally:
        feed.stop.set()
        worker.join()


def test_the_engine_feed_hands_samples_and_staleness_to_a_callback(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    _append(session, 0, 30)
    with following(session) as (events, taken):
        _wait(events, lambda event: isinstance(event, Sampled))
        assert taken[0].lines_read == 30
        _append(session, 30, 10)
        _wait(events, lambda event: isinstance(event, Sampled) and event.view.lines_read == 40)
        assert taken[-1].lines_read == 40
        session.unlink()
        stale = _wait(events, lambda event: isinstance(event, Stale) and bool(event.reason))
        assert isinstance(stale, Stale) and stale.reason == "file gone"
    assert all(type(event).__module__ == "ctxtop.engine.live.feed" for event in events)


def test_a_feed_follows_a_session_in_an_opencode_database(tmp_path: Path) -> None:
    """Not stale while the database reads (the session is no file of its own), the agent's
    rewritten answer shows, and a database that goes away is said."""
    database = tmp_path / "opencode.db"
    session = load_sample(database)

    with following(session, use_watchfiles=True) as (events, taken):

        def rewritten() -> bool:
            last = taken[-1].last_request if taken else None
            return last is not None and last.output == 99

        _wait(events, lambda event: isinstance(event, Sampled))
        assert taken[0].api_requests == 14
        agent = writer(database)  # the last answer's row rewritten, as OpenCode does
        agent.execute(
            "UPDATE message SET data = json_set(data, '$.tokens.output', 99),"
            " time_updated = time_updated + 1 WHERE id = ?",
            ("msg_224f2b9fe001YS5XDjWlXUE47R",),
        )
        agent.close()
        _wait(events, lambda _: rewritten())
        assert not [event for event in events if isinstance(event, Stale) and event.reason]
        database.unlink()
        stale = _wait(events, lambda event: isinstance(event, Stale) and bool(event.reason))
        assert isinstance(stale, Stale) and "no such database" in stale.reason

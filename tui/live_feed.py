"""The dashboard's side of the live loop (``engine/live/feed.py``): the engine's feed, whose
events become Textual messages posted to the app."""

from __future__ import annotations

from collections.abc import Callable

from textual.message import Message

from ctxtop.engine.live import feed as live_feed
from ctxtop.engine.live.session import AnalysisChoice, LiveSession
from ctxtop.tui.messages import FeedProblem, FeedStale, LoadProgress, SessionUpdated


def message_for(event: live_feed.FeedEvent) -> Message:
    """The app's message for one of the feed's events."""
    if isinstance(event, live_feed.Sampled):
        return SessionUpdated(event.view)
    if isinstance(event, live_feed.Progress):
        return LoadProgress(event.done, event.total)
    if isinstance(event, live_feed.Problem):
        return FeedProblem(event.text)
    return FeedStale(event.reason)


class Feed(live_feed.Feed):
    """The engine's feed, posting each event as the app's message."""

    def __init__(
        self,
        session: LiveSession,
        post: Callable[[Message], object],
        *,
        poll_interval: float = 0.5,
        use_watchfiles: bool = True,
        choice: AnalysisChoice | None = None,
    ) -> None:
        super().__init__(
            session,
            lambda event: post(message_for(event)),
            poll_interval=poll_interval,
            use_watchfiles=use_watchfiles,
            choice=choice,
        )

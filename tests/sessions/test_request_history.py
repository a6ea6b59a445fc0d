"""The requests' sizes a sample carries (``SessionState.request_history``): what was shown stays
as it was shown while the session goes on, and showing it again costs nothing per request."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from ctxtop.engine.sessions.model import SessionState, Usage


def _state(requests: int) -> SessionState:
    state = SessionState(agent="claude-code", path=Path("/s.jsonl"))
    for n in range(requests):
        state.record_response(f"msg_{n}", Usage(input_tokens=1000 + n, output_tokens=10), line=n)
    return state


def test_a_history_shown_keeps_its_sizes_as_the_session_goes_on() -> None:
    state = _state(5)
    shown = state.request_history()
    assert list(shown) == [1010, 1011, 1012, 1013, 1014] and len(shown) == 5
    state.record_response("msg_5", Usage(input_tokens=2000), line=9)  # a new request
    state.record_response("msg_4", Usage(input_tokens=3000), line=4)  # the newest, revised
    assert list(shown) == [1010, 1011, 1012, 1013, 1014]  # what the screen showed, still
    now = state.request_history()
    assert list(now) == [1010, 1011, 1012, 1013, 3000, 2000]
    assert now == (1010, 1011, 1012, 1013, 3000, 2000) and now != shown
    assert now[-1] == 2000 and list(now[1:3]) == [1011, 1012] and max(now) == 3000


def test_showing_the_history_copies_no_request() -> None:
    state = _state(50_000)
    state.request_history()  # (what a first look allocates once)
    tracemalloc.start()
    try:
        views = [state.request_history() for _ in range(100)]
        state.record_response("msg_new", Usage(input_tokens=5), line=10**6)  # an append
        views.append(state.request_history())
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(views[-1]) == 50_001
    assert held < 50_000  # bytes: not a copy of 50,000 sizes per look (400 KB as an array)

"""A live session's figures over the whole history (the context size after every request, its
share of the window, the forecast from the requests since the last compaction) after each
append: the same as worked out from every response, with work that does not grow with the
history.

The sessions are the bundled Claude Code logs with a compaction, repeated with fresh ids (each
copy ends in its own compaction). Work is counted, never timed: the responses whose usage is
read per update.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from session_copies import COMPACTED, copies

from ctxtop.engine.analysis.forecast import RECENT
from ctxtop.engine.live.session import LiveSession
from ctxtop.engine.sessions.model import Response, SessionState, ToolCall

APPENDS = 12


class Reads:
    """Counts reads of one field of a slotted class (a response's usage: a response visited; a
    tool call's name: a call visited), still giving the real value."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, owner: type, name: str) -> None:
        self.reads = 0
        slot = owner.__dict__[name]  # the slot's own descriptor keeps the value

        def read(item: object) -> Any:
            self.reads += 1
            return slot.__get__(item, owner)

        def write(item: object, value: Any) -> None:
            slot.__set__(item, value)

        monkeypatch.setattr(owner, name, property(read, write))


def opened(path: Path, lines: list[bytes]) -> LiveSession:
    """A live session that has taken in all but the last ``APPENDS`` lines."""
    path.write_bytes(b"".join(lines[: len(lines) - APPENDS]))
    live = LiveSession(path)
    live.poll()
    live.view()
    return live


def append(live: LiveSession, path: Path, line: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(line)
    live.poll()
    live.figures()
    live.view()


def share(tokens: int, window: int) -> float:
    return round(tokens / window, 4) if window else 0.0


def state_of(live: LiveSession) -> SessionState:
    adapter = live.reader.adapter
    assert adapter is not None
    return adapter.state


def append_work(tmp_path: Path, count: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """Responses and tool calls visited by the updates (figures, analysis, prompt outline)
    after each of the last 12 lines of a session of ``count`` copies."""
    tmp_path.mkdir()
    path = tmp_path / "session.jsonl"
    lines = copies(COMPACTED[0], count)
    live = opened(path, lines)
    with monkeypatch.context() as patched:
        usage = Reads(patched, Response, "usage")
        names = Reads(patched, ToolCall, "name")
        for line in lines[len(lines) - APPENDS :]:
            append(live, path, line)
    return usage.reads, names.reads


def test_append_work_does_not_grow_with_the_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = append_work(tmp_path / "small", 10, monkeypatch)
    big = append_work(tmp_path / "big", 40, monkeypatch)
    for visited_small, visited_big in zip(small, big, strict=True):
        assert visited_small > 0
        assert visited_big <= 1.2 * visited_small, (small, big)


@pytest.mark.parametrize("sample", COMPACTED, ids=lambda path: path.stem[:8])
def test_the_history_after_each_append_is_that_of_every_response(
    tmp_path: Path, sample: Path
) -> None:
    """Claude Code logs a response again with new usage (one line per content block), and a
    compaction starts the forecast's requests again: after every line the running history and
    forecast equal those worked out from all the responses."""
    lines = copies(sample, 3)
    path = tmp_path / "session.jsonl"
    path.write_bytes(lines[0])
    live = LiveSession(path)
    live.poll()
    compared = 0
    for line in lines[1:]:
        append(live, path, line)
        view = live.view()
        if view is None or view.analysis is None:
            continue
        state = state_of(live)
        every = tuple(response.usage.total for response in state.responses.values())
        since = state.last_rewrite_line
        recent = [
            response.usage.total for response in state.responses.values() if response.line > since
        ]
        analysis = view.analysis
        window = analysis.thresholds.window
        assert view.history == every
        assert analysis.history == every
        assert analysis.history_fill == tuple(share(size, window) for size in every)
        # The forecast reads the last RECENT + 1 of them (engine/analysis/forecast.py).
        assert state.requests_since(since, RECENT + 1) == recent[-(RECENT + 1) :]
        compared += 1
    assert compared > len(lines) // 2

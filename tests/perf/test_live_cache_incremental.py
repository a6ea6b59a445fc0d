"""A live session's cache simulation after each append: the same figures whether or not it
resumes from its checkpoints (the shapes' walk up to the last compaction, the simulation's
snapshots), and work that does not grow with the history before the last compaction.

The sessions are the bundled Claude Code logs with a compaction, repeated with fresh ids (each
copy ends in its own compaction). Work is counted, never timed: the requests whose shape is
worked out and the requests simulated per update.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from session_copies import COMPACTED, copies

from ctxtop.engine.agents.session_reader import SessionReader
from ctxtop.engine.analysis import cache_shapes
from ctxtop.engine.analysis.analyze import Analyzer
from ctxtop.engine.analysis.cache_sim import CacheSimulator
from ctxtop.engine.analysis.report import analyze_session

APPENDS = 12


class Counter:
    """Counts calls of a method on one object, still running the real method."""

    def __init__(self, owner: object, name: str) -> None:
        self.calls = 0
        real = getattr(owner, name)

        def counted(*args: object, **kwargs: object) -> object:
            self.calls += 1
            return real(*args, **kwargs)

        setattr(owner, name, counted)


def follow(tmp_path: Path, lines: list[bytes], appends: int) -> tuple[SessionReader, Analyzer]:
    """A reader and analyzer that have taken in all but the last ``appends`` lines."""
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(lines[: len(lines) - appends]))
    reader = SessionReader(path)
    reader.poll()
    analyzer = Analyzer()
    assert reader.adapter is not None
    analyze_session(reader.adapter, analyzer=analyzer)
    return reader, analyzer


@pytest.mark.parametrize("sample", COMPACTED, ids=lambda path: path.stem[:8])
def test_resuming_from_checkpoints_gives_the_figures_of_a_whole_walk(
    tmp_path: Path, sample: Path
) -> None:
    lines = copies(sample, 3)
    appends = len(lines) // 3 + 5  # the last copy, across its compaction, and before it
    reader, analyzer = follow(tmp_path, lines, appends)
    whole = Analyzer()
    path = tmp_path / "session.jsonl"
    compared = 0
    for line in lines[len(lines) - appends :]:
        with path.open("ab") as handle:
            handle.write(line)
        reader.poll()
        assert reader.adapter is not None
        live = analyze_session(reader.adapter, analyzer=analyzer)
        # The same updates without resuming: every response walked, every request simulated.
        whole._shapes._checkpoint = None
        if whole._simulator is not None:
            whole._simulator._restart()
        reference = analyze_session(reader.adapter, analyzer=whole)
        assert live.cache == reference.cache
        # Right after the compaction, until a request follows it, nothing is simulated.
        compared += len(live.cache.requests) > 0
    assert compared >= appends // 2


def append(path: Path, reader: SessionReader, analyzer: Analyzer, lines: list[bytes]) -> None:
    """Append the lines one at a time, each followed by the reader and analysed."""
    for line in lines:
        with path.open("ab") as handle:
            handle.write(line)
        reader.poll()
        assert reader.adapter is not None
        analyze_session(reader.adapter, analyzer=analyzer)


def append_work(tmp_path: Path, count: int) -> int:
    """Shapes worked out plus requests simulated by the updates after each of the last 12
    lines of a session of ``count`` copies (lines after its last compaction's first request,
    which tells the analysis the system prompt's size and so changes every request's shape)."""
    tmp_path.mkdir()
    lines = copies(COMPACTED[0], count)
    reader, analyzer = follow(tmp_path, lines, APPENDS)
    simulator = analyzer._simulator
    assert isinstance(simulator, CacheSimulator)
    work = [Counter(analyzer._shapes, "_memo_shape"), Counter(simulator, "_simulate")]
    append(tmp_path / "session.jsonl", reader, analyzer, lines[len(lines) - APPENDS :])
    assert analyzer._simulator is simulator
    return sum(counter.calls for counter in work)


def test_append_work_does_not_grow_with_the_history_before_the_last_compaction(
    tmp_path: Path,
) -> None:
    small = append_work(tmp_path / "small", 10)
    big = append_work(tmp_path / "big", 40)
    assert small > 0
    assert big <= 1.2 * small, (small, big)


def test_a_cold_walk_copies_its_shapes_once_whatever_the_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk's checkpoint holds every shape so far: made once per analysis, not once per
    response before the last compaction (that was quadratic in the session's requests)."""
    copies_made = [0]
    real_copy = cache_shapes._Walk.copy

    def counted_copy(walk: cache_shapes._Walk) -> cache_shapes._Walk:
        copies_made[0] += 1
        return real_copy(walk)

    monkeypatch.setattr(cache_shapes._Walk, "copy", counted_copy)
    copied = []
    for count in (10, 40):
        path = tmp_path / f"session-{count}.jsonl"
        path.write_bytes(b"".join(copies(COMPACTED[0], count)))
        reader = SessionReader(path)
        reader.poll()
        assert reader.adapter is not None
        analyzer = Analyzer()
        copies_made[0] = 0
        analyze_session(reader.adapter, analyzer=analyzer)
        checkpoint = analyzer._shapes._checkpoint
        assert checkpoint is not None and checkpoint[1] > 0  # the history before is resumable
        copied.append(copies_made[0])
    assert copied == [1, 1]


def simulated_work(tmp_path: Path, count: int, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Requests shaped plus requests simulated: by the cold analysis of all but the last 12
    lines of ``count`` copies of a compacted session, then by the updates after each of them."""
    calls = [0]
    real_shape, real_simulate = cache_shapes.ShapeBuilder._shape, CacheSimulator._simulate

    def shape(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real_shape(*args, **kwargs)

    def simulate(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real_simulate(*args, **kwargs)

    monkeypatch.setattr(cache_shapes.ShapeBuilder, "_shape", shape)
    monkeypatch.setattr(CacheSimulator, "_simulate", simulate)
    tmp_path.mkdir()
    lines = copies(COMPACTED[1], count)
    reader, analyzer = follow(tmp_path, lines, APPENDS)
    work = [calls[0]]
    calls[0] = 0
    append(tmp_path / "session.jsonl", reader, analyzer, lines[len(lines) - APPENDS :])
    return [*work, calls[0]]


def test_only_the_live_context_is_simulated_whatever_the_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The requests before the last compaction are history, taken from the log: doubling it
    adds no request shaped or simulated, cold or per append."""
    small, big = (simulated_work(tmp_path / str(n), n, monkeypatch) for n in (10, 20))
    assert small[0] > 0 and small[1] > 0
    assert big == small

"""A session's history responses are kept in columns (engine/sessions/responses.py): reading a
session with the archive gives the same responses, in the same order, with the same figures, as
reading it with the archive switched off, on every bundled session and on long sessions with
many compactions, whether read in one go or followed line by line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from session_copies import COMPACTED, copies

from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.sessions import responses as columns
from ctxtop.engine.sessions.model import Compaction, SessionState, Truncation, Usage

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = sorted(
    path
    for folder in (ROOT / "sample_sessions", ROOT / "tests" / "sessions" / "data")
    for pattern in ("*.jsonl", "*.json")
    for path in folder.rglob(pattern)
)


def _records(state: SessionState) -> dict[str, Any]:
    """Everything the state holds about its responses, sub-agents' too."""
    return {
        "responses": [
            (r.key, r.usage, r.model, r.line, r.timestamp, r.index)
            for r in state.responses.values()
        ],
        "newest first": [r.key for r in reversed(state.responses.values())],
        "figures": [
            list(state.responses.figures(start, start + 3)) for start in range(len(state.responses))
        ],
        "by key": [state.responses[r.key] for r in state.responses.values()],
        "requests": (
            list(state.request_sizes),
            list(state.request_lines),
            list(state.request_changes),
            state.request_lines_ordered,
        ),
        "totals": state.totals,
        "last": state.last_response,
        "pending": state.pending_compaction,
        "subagents": {key: _records(child) for key, child in state.subagents.items()},
    }


def _archived(state: SessionState) -> int:
    return state.responses.archived + sum(_archived(c) for c in state.subagents.values())


def _read(path: Path, data: bytes | None, *, archive: bool, live: bool) -> SessionState:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(columns, "ARCHIVE", archive)
        if not live:
            return read_all(SessionReader(path, data=data))
        # Followed as it is written: one line at a time.
        source = data if data is not None else path.read_bytes()
        target = _scratch(path)
        target.write_bytes(b"")
        reader = SessionReader(target)
        with target.open("ab") as out:
            for line in source.splitlines(keepends=True):
                out.write(line)
                out.flush()
                reader.poll()
        return read_all(reader)


_SCRATCH: list[Path] = []


def _scratch(path: Path) -> Path:
    return _SCRATCH[0] / path.name


@pytest.fixture(autouse=True)
def _scratch_dir(tmp_path: Path) -> Any:
    _SCRATCH[:] = [tmp_path]
    yield
    _SCRATCH.clear()


def _readable(path: Path) -> bool:
    try:
        read_all(SessionReader(path))
    except Exception:  # (not a session file: notes, settings)
        return False
    return True


@pytest.mark.parametrize(
    "path", [p for p in SESSIONS if _readable(p)], ids=lambda p: str(p.relative_to(ROOT))
)
def test_every_bundled_session_reads_the_same_responses_with_the_archive(path: Path) -> None:
    with_archive = _records(_read(path, None, archive=True, live=False))
    assert with_archive == _records(_read(path, None, archive=False, live=False))


@pytest.mark.parametrize("live", [False, True], ids=["cold", "followed"])
@pytest.mark.parametrize("source", COMPACTED, ids=lambda path: path.parent.name)
def test_a_long_compacting_session_reads_the_same_responses_with_the_archive(
    source: Path, live: bool
) -> None:
    data = b"".join(copies(source, 6))
    state = _read(source, data, archive=True, live=live)
    assert _archived(state) > len(state.responses) // 2  # most of the history is in columns
    assert _records(state) == _records(_read(source, data, archive=False, live=live))


# Each agent's bundled session with a rewrite (Codex, Gemini and Copilot CLI compactions or
# truncations), its lines after the first repeated: the same ids again, so that archived
# responses are recorded again (Codex finds a response by its running totals, Gemini by its id).
REWRITING = [
    ROOT
    / "sample_sessions/codex/sessions/2026/11/23"
    / "rollout-2026-11-23T03-15-46-01a20667-0c69-7050-8ebb-bb746d3f79b0.jsonl",
    ROOT
    / "tests/sessions/data/generated/codex/exec-resume-0.120/sessions/2026/11/23"
    / "rollout-2026-11-23T03-18-04-01a20669-25da-7b12-bbd1-d02a632cef15.jsonl",
    ROOT
    / "tests/sessions/data/generated/gemini-cli/tmp/calc-gemini/chats"
    / "session-2026-11-23T03-12-196d3f0b.jsonl",
    ROOT
    / "tests/sessions/data/generated/copilot-cli/session-state"
    / "244e876e-1a43-4419-88f6-972d1b6e8877/events.jsonl",
]


@pytest.mark.parametrize("live", [False, True], ids=["cold", "followed"])
@pytest.mark.parametrize("source", REWRITING, ids=lambda path: path.parts[-2][:24])
def test_every_agent_repeating_its_rewrites_reads_the_same_responses(
    source: Path, live: bool
) -> None:
    first, *rest = source.read_bytes().splitlines(keepends=True)
    data = first + b"".join(rest) * 6
    state = _read(source, data, archive=True, live=live)
    assert len(state.compactions) + len(state.truncations) >= 6
    assert state.responses.archived >= len(state.responses) // 2
    assert _records(state) == _records(_read(source, data, archive=False, live=live))


def _session(archive: bool) -> SessionState:
    """Responses a, b; a compaction; c; a truncation; d; a compaction; then a and c again
    with new figures (a and c archived by then), and e."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(columns, "ARCHIVE", archive)
        state = SessionState(agent="claude-code", path=Path("s.jsonl"))
        state.record_response("a", Usage(10, 1, 100, 5), model="m1", line=1, timestamp="t1")
        state.record_response("b", Usage(20, 2, 200, 0), line=2, timestamp=None)
        state.record_compaction(Compaction("auto", line=3))
        state.record_response("c", Usage(30, 3, 0, 300), model="m2", line=4, timestamp="")
        state.record_truncation(Truncation(line=5))
        state.record_response("d", Usage(40, 4), model="m1", line=6, timestamp="t6")
        state.record_compaction(Compaction("manual", line=7))
        assert state.responses.archived == (3 if archive else 0)  # a, b, c: before line 5
        state.record_response("a", Usage(11, 7, 90, 6, 2), model="m3", line=8)
        state.record_response("c", Usage(31, 3, 0, 299), line=9, on_context=False)
        state.record_response("e", Usage(50, 5), line=10, timestamp="t10")
        return state


def test_a_key_repeated_after_two_compactions_revises_its_figures_in_place() -> None:
    archived, plain = _session(True), _session(False)
    assert _records(archived) == _records(plain)
    assert list(archived.request_sizes) == [11 + 7 + 90 + 6, 222, 31 + 3 + 299, 44, 55]
    assert list(archived.request_changes) == [0, 1, 2, 3, 0, 2, 4]
    assert archived.totals == Usage(11 + 20 + 31 + 40 + 50, 7 + 2 + 3 + 4 + 5, 290, 305, 2)
    a = archived.responses["a"]
    assert (a.usage, a.model, a.line, a.index) == (Usage(11, 7, 90, 6, 2), "m3", 1, 0)
    assert "c" in archived.responses and "z" not in archived.responses
    assert list(archived.responses.figures(1, 9)) == [
        (r.usage, r.model) for r in list(archived.responses.values())[1:]
    ]
    assert archived.responses.get("z") is None
    assert (archived.responses["b"].timestamp, archived.responses["c"].timestamp) == (None, "")


def test_figures_past_32_bits_are_kept_exactly() -> None:
    """(The columns hold 32-bit figures until one does not fit: revised or added.)"""
    state = SessionState(agent="codex", path=Path("s.jsonl"))
    for number, usage in enumerate([Usage(5, 1), Usage(6), None, Usage(3 * 10**9, 2, 10**12)]):
        if usage is None:  # r0, archived, revised
            state.record_response("r0", Usage(2**40), line=10 * number + 1)
        else:
            state.record_response(f"r{number}", usage, line=10 * number + 1)
        state.record_compaction(Compaction("auto", line=10 * number + 2))
        state.record_response(f"c{number}", Usage(number), line=10 * number + 3)
    state.record_compaction(Compaction("auto", line=60))
    assert state.responses.archived == 6
    assert [(r.key, r.usage) for r in state.responses.values()] == [
        ("r0", Usage(2**40)),
        ("c0", Usage(0)),
        ("r1", Usage(6)),
        ("c1", Usage(1)),
        ("c2", Usage(2)),
        ("r3", Usage(3 * 10**9, 2, 10**12)),
        ("c3", Usage(3)),
    ]
    state.record_response("r0", Usage(2**41), line=70)
    assert state.responses["r0"].usage == Usage(2**41)
    assert state.totals == Usage(2**41 + 6 + 3 * 10**9 + 0 + 1 + 2 + 3, 2, 10**12)


STAMPS = [
    "2026-11-26T12:39:37.123Z",
    None,
    "",
    "2026-11-26T12:39:37Z",
    "2026-11-26T12:39:37.123+00:00",
    "\u0662\u0660\u0662\u0666-11-26T12:39:37.123Z",  # (other digits than ASCII's)
    "2026-11-26T12:39:37.123Z\n2026-11-26T12:39:37.124Z",
    "0001-01-01T00:00:00.000Z",
    "x\udc80y",  # (a lone surrogate, as a JSON string may hold)
]


@pytest.mark.parametrize("together", [False, True], ids=["mixed", "one-shape"])
def test_keys_and_timestamps_of_any_shape_come_back_as_they_were(together: bool) -> None:
    """(Timestamps as the agents write them are packed in 64 bits, any other text kept.)"""
    stamps = [s for s in STAMPS if s and s.isascii() and len(s) == 24] if together else STAMPS
    keys = [f"k\u00e9y{number}\udc80" for number in range(len(stamps))]
    state = SessionState(agent="codex", path=Path("s.jsonl"))
    for number, (key, stamp) in enumerate(zip(keys, stamps, strict=True)):
        state.record_response(key, Usage(number), line=number, timestamp=stamp)
    state.record_compaction(Compaction("auto", line=100))
    state.record_response("after", Usage(1), line=101)
    state.record_compaction(Compaction("auto", line=102))
    assert state.responses.archived == len(stamps)
    assert [(r.key, r.timestamp) for r in state.responses.values()][: len(stamps)] == list(
        zip(keys, stamps, strict=True)
    )
    assert all(state.responses[key].key == key for key in keys)

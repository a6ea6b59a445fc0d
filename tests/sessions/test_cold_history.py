"""A cold read takes the history before a Claude Code session's last compaction for its figures
only (engine/agents/claude_code/history.py): the same figures as reading every line in full, on
every bundled session and on long sessions made of copies with compactions, with work that grows
with the history only in its lean reading, and a session followed live keeps one window of
messages whatever its history.

Work is counted, never timed: lines given to the full path (``ClaudeCodeAdapter.feed``) and taken
by the lean one, texts tokenized, messages alive."""

from __future__ import annotations

import gc
import json
import random
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from conftest import Watch
from session_copies import COMPACTED, copies

from ctxtop.engine.agents import session_reader
from ctxtop.engine.agents.claude_code import history
from ctxtop.engine.agents.claude_code import reader as claude_reader
from ctxtop.engine.agents.claude_code.reader import ClaudeCodeAdapter
from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.sessions import model
from ctxtop.engine.sessions.columns import Hashes
from ctxtop.engine.sessions.model import Message, SessionState
from ctxtop.engine.sessions.report_json import build_report
from ctxtop.engine.sessions.tail import ByteSource

ROOT = Path(__file__).resolve().parents[2]
# A real 2.1.330 session of 100 KB without compaction.
SAMPLE_NO_COMPACTION = next(
    (ROOT / "tests/sessions/data/real/claude-code/generated-cli-2.1.330").rglob("60af219f-*.jsonl")
)
SESSIONS = sorted(
    path
    for folder in (ROOT / "sample_sessions" / "claude-code", ROOT / "tests" / "sessions" / "data")
    for path in folder.rglob("*.jsonl")
)


def _figures(reader: SessionReader) -> dict[str, Any]:
    """What a reader's state shows: the report (with the context by kind) and the state's own
    records. (Not ``context_before_rewrite``: a cold read keeps it only when a figure needs it,
    i.e. no request followed the last compaction.)"""
    state = read_all(reader)
    assert reader.adapter is not None
    return {
        "report": build_report(reader.adapter, breakdown=True),
        "responses": [
            (r.key, r.usage, r.model, r.line, r.timestamp) for r in state.responses.values()
        ],
        "requests": (state.request_sizes, state.request_lines, state.request_lines_ordered),
        "tools": [
            (c.call_id, c.name, c.line, c.result_chars, c.is_error, c.persisted_to)
            for c in state.tools.values()
        ],
        "process_starts": state.process_starts,
        "context": [
            (m.id, m.role, m.kind, m.response_key, [(b.kind, b.content()) for b in m.blocks])
            for m in state.context
        ],
        "last_response": state.last_response,
        "pending_compaction": state.pending_compaction,
        "subagents": {
            key: (child.totals, child.description, child.parent_tool_call_id)
            for key, child in state.subagents.items()
        },
    }


def _both_ways(path: Path, data: bytes | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    full = _figures(SessionReader(path, data=data, lean_history=False))
    cold = _figures(SessionReader(path, data=data))
    return full, cold


# The conversation's records; the others (queue operations, titles, modes: small records the
# lean reading leaves to the full path) are not the history's bulk.
CONVERSATION = {"user", "assistant", "attachment", "system", "progress"}


class Work:
    """Lines through the full path, counted while reading (``messages``: of the conversation)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.full = 0
        self.messages = 0
        real = ClaudeCodeAdapter.feed

        def feed(adapter: ClaudeCodeAdapter, record: Any, line: int) -> None:
            self.full += 1
            self.messages += isinstance(record, dict) and record.get("type") in CONVERSATION
            real(adapter, record, line)

        monkeypatch.setattr(ClaudeCodeAdapter, "feed", feed)


def _lean_lines(reader: SessionReader) -> int:
    history = getattr(reader.adapter, "_history", None)
    return history.lean_lines if history is not None else 0


@pytest.mark.parametrize("path", SESSIONS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_session_reads_the_same_cold(path: Path) -> None:
    full, cold = _both_ways(path)
    assert cold == full


@pytest.mark.parametrize("count", [1, 2, 5])
@pytest.mark.parametrize("source", COMPACTED, ids=lambda path: path.parent.name)
def test_copies_with_compactions_read_the_same_cold(source: Path, count: int) -> None:
    data = b"".join(copies(source, count))
    full, cold = _both_ways(source, data)
    assert cold == full
    reader = SessionReader(source, data=data)
    read_all(reader)
    assert _lean_lines(reader) > 0  # the history before the last compaction went the lean way


@pytest.mark.parametrize("count", [1, 3])
@pytest.mark.parametrize("source", COMPACTED, ids=lambda path: path.parent.name)
def test_a_history_far_from_the_end_is_planned_at_its_first_boundary(
    source: Path, count: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log whose end holds no compaction boundary (none in the last ``PLAN_WITHIN`` bytes,
    lowered here): its history is planned when the first read meets one, the lines before it
    read in full; the figures are a full read's, the history after it goes the lean way."""
    monkeypatch.setattr(claude_reader, "PLAN_WITHIN", 100)
    data = b"".join(copies(source, count))
    full, cold = _both_ways(source, data)
    assert cold == full
    reader = SessionReader(source, data=data)
    read_all(reader)
    assert (_lean_lines(reader) > 0) == (count > 1)  # (one copy: its boundary is the split)


def test_a_log_without_compaction_is_not_searched_through(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before the first read, the reader looks for a compaction boundary only near the end of
    the log (``PLAN_WITHIN``): a long chain without any is not read through twice."""
    path = SAMPLE_NO_COMPACTION
    monkeypatch.setattr(claude_reader, "PLAN_WITHIN", 4096)
    monkeypatch.setattr(ByteSource, "STEP", 4096)
    looked: list[int] = []
    real = ByteSource.read

    def read(source: ByteSource, start: int, end: int) -> bytes:
        found = real(source, start, end)
        looked.append(len(found))
        return found

    monkeypatch.setattr(ByteSource, "read", read)
    full, cold = _both_ways(path)
    assert cold == full
    assert 0 < sum(looked) <= 3 * 4096 < path.stat().st_size // 4


def test_a_compaction_with_no_request_after_it_reads_a_window_more(tmp_path: Path) -> None:
    """The context before the last compaction is still the figures' (no request since): the
    full path starts at the compaction before it."""
    lines = copies(COMPACTED[0], 3)
    boundary = max(i for i, line in enumerate(lines) if b'"compact_boundary"' in line)
    data = b"".join(lines[: boundary + 1])
    path = tmp_path / "just-compacted.jsonl"
    path.write_bytes(data)
    full, cold = _both_ways(path)
    assert cold == full
    reader = SessionReader(path)
    state = read_all(reader)
    assert _lean_lines(reader) > 0
    assert state.context_before_rewrite is not None
    before = SessionReader(path, lean_history=False)
    kept = read_all(before).context_before_rewrite
    assert kept is not None
    assert [m.id for m in state.context_before_rewrite[0]] == [m.id for m in kept[0]]


@pytest.mark.parametrize("far", [False, True], ids=["", "planned-late"])
def test_a_rewind_across_the_compaction_reads_in_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, far: bool
) -> None:
    """A line hanging off the history (the agent resumed from before the compaction) needs the
    history's chain: the reader reads the file again in full, to the same figures (also when
    the history is planned at its first boundary, the lines before it read in full)."""
    if far:
        monkeypatch.setattr(claude_reader, "PLAN_WITHIN", 100)
    lines = copies(COMPACTED[0], 3)
    first = json.loads(next(line for line in lines if b'"type":"user"' in line))
    rewound = dict(first, uuid="0f0f0f0f-0000-4000-8000-000000000001", parentUuid=first["uuid"])
    rewound["message"] = {"role": "user", "content": "start over from here"}
    data = b"".join(lines) + json.dumps(rewound).encode() + b"\n"
    path = tmp_path / "rewound.jsonl"
    path.write_bytes(data)
    full, cold = _both_ways(path)
    assert cold == full
    work = Work(monkeypatch)
    read_all(SessionReader(path, lean_history=False))
    in_full, work.full = work.full, 0
    reader = SessionReader(path)
    read_all(reader)
    assert _lean_lines(reader) == 0  # read again in full
    assert work.full >= in_full


def test_work_grows_with_the_history_only_in_the_lean_reading(
    monkeypatch: pytest.MonkeyPatch, watch: Watch
) -> None:
    """Doubling the history: the same lines through the full path, twice the lean ones, and
    no more texts tokenized for the report's context and tools (the results' budget lowered
    under one copy's results)."""
    monkeypatch.setattr(model, "RESULT_BUDGET", 3_000)
    work = Work(monkeypatch)
    counts = []
    for count in (8, 16, 32):
        work.full = work.messages = 0
        source = COMPACTED[0]
        reader = SessionReader(source, data=b"".join(copies(source, count)))
        read_all(reader)
        assert reader.adapter is not None
        with watch.active():
            build_report(reader.adapter, breakdown=True)
        lines = work.full + _lean_lines(reader)
        counts.append((work.messages, lines, sum(map(len, watch.counted))))
        watch.clear()
    (full8, lines8, tokens8), (full16, lines16, tokens16), (full32, lines32, tokens32) = counts
    assert full8 == full16 == full32  # the conversation after the last compaction
    assert lines16 <= 2.2 * lines8 and lines32 <= 2.2 * lines16
    assert tokens16 <= 1.1 * tokens8 and tokens32 <= 1.1 * tokens16


def _messages_alive() -> int:
    gc.collect()
    return sum(isinstance(item, Message) for item in gc.get_objects())


def _follow(path: Path, lines: list[bytes], step: int) -> tuple[SessionReader, SessionState]:
    path.write_bytes(b"")
    reader = SessionReader(path)
    for start in range(0, len(lines), step):
        with path.open("ab") as out:
            out.write(b"".join(lines[start : start + step]))
        reader.poll()
    return reader, read_all(reader)


def test_a_session_followed_live_lets_go_of_the_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Followed append by append, a session with twice the history keeps as many messages and
    result texts alive (one window's), and gives the figures of a full read."""
    monkeypatch.setattr(model, "RESULT_BUDGET", 3_000)
    alive = []
    for count in (6, 12):
        lines = copies(COMPACTED[0], count)
        path = tmp_path / f"live-{count}.jsonl"
        reader, state = _follow(path, lines, 11)
        texts = sum(call.result_text is not None for call in state.tools.values())
        alive.append((_messages_alive(), texts))
        assert _figures(reader) == _figures(SessionReader(path, lean_history=False))
        del reader, state
    assert alive[1] == alive[0]


def test_history_hashes_are_a_set() -> None:
    """The uuid hashes a cold read notes (``columns.Hashes``): each found again as its buckets
    grow, no other one found."""
    generator = random.Random(16)
    keys = [generator.getrandbits(64) - 2**63 for _ in range(70_000)]
    hashes = Hashes()
    for key in keys:
        hashes.add(key)
    assert all(key in hashes for key in keys)
    others = [generator.getrandbits(64) - 2**63 for _ in range(20_000)]
    known = set(keys)
    assert not any(key in hashes for key in others if key not in known)


def test_a_short_history_keeps_little() -> None:
    """A session with one compaction keeps about what its lines hold, not a fixed table."""
    for source in COMPACTED:
        assert _retained(source, 1)[1] < 150_000


@pytest.mark.parametrize("step", [1, 2, 3, 7, 64])
def test_lines_are_found_from_the_end(step: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``ByteSource.lines_back``: every complete line holding the pattern, the last first, and
    ``contains`` over any range, whatever the lines' lengths against the read step."""
    monkeypatch.setattr(ByteSource, "STEP", step)
    generator = random.Random(step)
    for _ in range(200):
        lines = [
            bytes(generator.choice(b"abX") for _ in range(generator.choice([0, 1, 5, 40])))
            for _ in range(generator.randint(0, 12))
        ]
        data = b"\n".join(lines) + (b"\n" if generator.random() < 0.5 else b"")
        expected, offset = [], 0
        for line in data.split(b"\n")[:-1]:  # the complete lines
            if b"XX" in line:
                expected.append((offset, line))
            offset += len(line) + 1
        assert list(ByteSource(data=data).lines_back(b"XX")) == expected[::-1]
        start = generator.randint(0, len(data))
        end = generator.randint(start, len(data))
        assert ByteSource(data=data).contains(b"XX", start, end) == (b"XX" in data[start:end])


def _retained(source: Path, count: int) -> tuple[int, int]:
    """The lines of ``count`` copies and the heap a cold read of them keeps (traced bytes)."""
    lines = copies(source, count)
    data = b"".join(lines)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        state = read_all(SessionReader(source, data=data))
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert state.compactions  # (kept alive to here)
    return len(lines), kept


# Bytes a cold read keeps per added history line, at most: each response's figures and each
# tool call (the calc sample has a response every 3 lines and a call every 3.5); and copies
# taken first, so that both reads have their uuid hashes in as many buckets (columns.Hashes).
# (Measured: 19 and 78 bytes, with the history's responses and calls in columns.)
PER_LINE = {COMPACTED[0]: (24, 20), COMPACTED[1]: (100, 40)}


@pytest.mark.parametrize("source", COMPACTED, ids=lambda path: path.parent.name)
def test_the_heap_of_a_cold_read_grows_little_per_history_line(
    source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twice the history costs a few dozen bytes of memory per added line (counted in traced
    bytes, never time), not the lines' messages: result texts past the budget are let go of."""
    monkeypatch.setattr(model, "RESULT_BUDGET", 10_000)
    bound, count = PER_LINE[source]
    lines, kept = _retained(source, count)
    more_lines, more_kept = _retained(source, 2 * count)
    assert (more_kept - kept) / (more_lines - lines) <= bound


def test_every_history_line_is_decoded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A history line the lean reading does not take (a queue operation, a mode, an
    ``api-request`` it reads for the prompt: records Claude Code writes its type first in) goes
    the full path without a lean decoding first; a lean one is not decoded again in full."""
    lean_decoded: list[bytes] = []
    full_decoded: list[bytes] = []
    real_lean, real_full = history.decode_line, session_reader.decode_line

    def lean(raw: bytes) -> Any:
        lean_decoded.append(raw)
        return real_lean(raw)

    def full(raw: bytes) -> Any:
        full_decoded.append(raw)
        return real_full(raw)

    monkeypatch.setattr(history, "decode_line", lean)
    monkeypatch.setattr(session_reader, "decode_line", full)
    source = COMPACTED[0]
    data = b"".join(copies(source, 5))
    reader = SessionReader(source, data=data)
    read_all(reader)
    assert _lean_lines(reader) > 0
    twice = set(lean_decoded) & set(full_decoded)
    assert any(raw.startswith(b'{"type":"queue-operation"') for raw in full_decoded)
    assert not [raw for raw in twice if raw.startswith(b'{"type":"')]

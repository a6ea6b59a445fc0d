"""What the analysis keeps between the updates of a live session is bounded by the live context:
followed across many compactions, the JSON audits of tool results and the prompt outline's
message labels are those of the messages on the context now, not of every message the session
ever had, and the session's history responses are rows of columns, not objects. Counted, never
measured in bytes.
"""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

from session_copies import COMPACTED, copies

from ctxtop.engine.live.session import LiveSession

CHUNK = 40


def test_the_analysis_keeps_what_the_live_context_holds(tmp_path: Path) -> None:
    lines = copies(COMPACTED[0], 8)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"")
    live = LiveSession(path)
    for end in range(CHUNK, len(lines) + CHUNK, CHUNK):
        with path.open("ab") as handle:
            handle.write(b"".join(lines[end - CHUNK : end]))
        live.poll()
        assert live.view() is not None
    adapter = live.reader.adapter
    assert adapter is not None
    state = adapter.snapshot()
    assert len(state.compactions) == 8
    results = {
        block.tool_call_id
        for message in state.context
        for block in message.blocks
        if block.kind == "tool_result"
    }
    audited = live.analyzer._tools._json
    assert set(audited) <= results
    labelled = live.outliner._labels
    assert labelled and set(labelled) <= {message.id for message in state.context}
    # The responses kept as objects are those since the rewrite before the last one (at most
    # two copies' worth); the history's are in columns (engine/sessions/responses.py).
    responses = state.responses
    assert len(responses) - responses.archived <= 2 * len(responses) // 8


def _held() -> int:
    """Bytes traced, but the interpreter's table of interned strings (pathlib interns path
    parts): it is reallocated now and then, and the first time looks like growth."""
    snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, "*pathlib.py")])
    return sum(stat.size for stat in snapshot.statistics("filename"))


def test_looking_again_and_again_at_an_unchanged_session_keeps_nothing_more(
    tmp_path: Path,
) -> None:
    """A dashboard refreshing a session with compactions (its gauge, its events) holds no more
    memory after 2,000 looks than after the first (each look once kept its compaction event)."""
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(copies(COMPACTED[0], 3)))
    live = LiveSession(path)
    live.poll()
    first = live.figures()
    assert any(event.kind == "compaction" for event in first.events)
    gc.collect()
    tracemalloc.start()
    try:
        before = _held()
        for _ in range(2_000):
            live.figures()
        gc.collect()
        held = _held() - before
    finally:
        tracemalloc.stop()
    assert held < 20_000  # bytes: not a copy per look (about 600 bytes each)

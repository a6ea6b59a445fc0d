"""The cache simulation on public real-API Claude Code sessions (1.0.98): the requests whose
logged uncached input is not the usual few tokens of framing."""

from __future__ import annotations

import json
from pathlib import Path

from analysis_expect import ROOT

from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.analysis.analyze import Analyzer
from ctxtop.engine.analysis.profiles import load_profile
from ctxtop.engine.analysis.setup import setup_for
from ctxtop.engine.config import Thresholds
from ctxtop.engine.sessions.ledger import encoding_for

REAL = ROOT / "tests/sessions/data/real/claude-code/public-d-kimuson-claude-code-viewer"


def cache_rows(path: Path) -> dict[int, tuple[int, int, int, int, int]]:
    """line -> (simulated read, write, uncached; logged read, write) of the main session."""
    reader = SessionReader(path)
    read_all(reader)
    assert reader.adapter is not None
    state = reader.adapter.snapshot()
    setup = setup_for(
        state, reader.adapter.autocompact_at, load_profile(reader.adapter.profile),
        Thresholds(),
    )  # fmt: skip
    cache = Analyzer().analyze(state, setup, encoding_for(state)).cache
    return {
        row.line: (row.read, row.write, row.uncached, row.logged_read or 0, row.logged_write or 0)
        for row in cache.requests
    }


def round_order(path: Path, line: int) -> tuple[list[str], list[str]]:
    """The calls of the round answered before ``line`` and the order their results arrived."""
    rows = [json.loads(text) for text in path.read_text().splitlines()[: line - 1]]
    calls: list[str] = []
    results: list[str] = []
    for row in rows:
        if row.get("isSidechain") or not isinstance(row.get("message"), dict):
            continue
        content = row["message"].get("content")
        blocks = content if isinstance(content, list) else []
        if row["type"] == "assistant":
            if results:
                calls, results = [], []
            calls += [b["id"] for b in blocks if b.get("type") == "tool_use"]
        else:
            results += [b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"]
    return calls, results


def within(simulated: int, logged: int) -> bool:
    return abs(simulated - logged) <= 0.05 * logged


def test_results_of_calls_after_the_last_arrived_one_stay_uncached() -> None:
    cases = [(REAL / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl", 22),
             (REAL / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", 224)]  # fmt: skip
    for path, line in cases:
        calls, results = round_order(path, line)
        # Parallel calls whose last result is not the last call's.
        assert len(calls) >= 3 and results[-1] != calls[-1]
        read, write, uncached, logged_read, logged_write = cache_rows(path)[line]
        assert within(read, logged_read) and within(write, logged_write)
        assert uncached > 40  # not just the closing framing
    # A round whose results arrived in call order keeps the few tokens of framing only.
    path = REAL / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
    calls, results = round_order(path, 16)
    assert len(calls) == 5 and results[-1] == calls[-1]
    read, write, uncached, logged_read, logged_write = cache_rows(path)[16]
    assert within(write, logged_write) and uncached < 10


def test_real_api_main_sessions_agree_on_nine_requests_in_ten() -> None:
    rows = [row for path in sorted(REAL.glob("*.jsonl")) for row in cache_rows(path).values()]
    agreeing = [r for r in rows if within(r[0], r[3]) and within(r[1], r[4])]
    assert len(rows) == 26 and len(agreeing) / len(rows) >= 0.9

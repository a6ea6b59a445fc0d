"""The dashboard follows a session as it is written; ``ctxtop report --json`` reads it cold. After
every chunk of appended lines both give the same figures: the report's (context, fill, totals,
breakdown...) and the analysis's (sections, the cache simulation request by request and its
totals, relevance, forecast...), on every sample session and on a long Claude Code session with
several compactions (the states right after a compaction, before the next request, included).

Chunks are 7 lines: they end at places of every kind (mid-round, right after a compaction's
boundary, after its summary). OpenAI chat ``.json`` files are written whole, never appended.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from analysis_expect import ROOT, check_clock, report_json
from session_copies import COMPACTED, copies

from ctxtop.engine.live.session import LiveSession
from ctxtop.engine.sessions.report_json import to_json

CHUNK = 7
SAMPLES = sorted((ROOT / "sample_sessions").rglob("*.jsonl"))


def differences(live: dict[str, Any], cold: dict[str, Any]) -> dict[str, Any]:
    """The keys whose values differ, with both values (live first)."""
    keys = sorted(set(live) | set(cold))
    return {key: (live.get(key), cold.get(key)) for key in keys if live.get(key) != cold.get(key)}


def assert_live_equals_cold(path: Path, lines: list[bytes]) -> int:
    """Append ``lines`` to ``path`` a chunk at a time; after each, the live session's figures
    are the cold report's. Returns how many updates had an analysis."""
    path.write_bytes(b"")
    live = LiveSession(path)
    analysed = 0
    for end in range(CHUNK, len(lines) + CHUNK, CHUNK):
        with path.open("ab") as handle:
            handle.write(b"".join(lines[end - CHUNK : end]))
        live.poll()
        view = live.view()
        cold = report_json(path, "--breakdown")
        cold_analysis = cold.pop("analysis", None)
        assert view is not None, (path.name, end)
        check_clock(view, cold)
        # Through JSON, as the report prints it.
        shown = json.loads(json.dumps(to_json(view.sample)))
        assert shown == cold, (path.name, end, differences(shown, cold))
        if view.analysis is None:
            assert cold_analysis is None, (path.name, end, view.analysis_error)
            continue
        analysis = json.loads(json.dumps(view.analysis.to_json()))
        assert analysis == cold_analysis, (path.name, end, differences(analysis, cold_analysis))
        analysed += 1
    return analysed


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_update_of_a_sample_session_shows_the_reports_figures(
    tmp_path: Path, sample: Path
) -> None:
    # The whole tree, so that the file has its sub-agents and side files beside it.
    home = tmp_path / "sample_sessions"
    shutil.copytree(ROOT / "sample_sessions", home)
    path = home / sample.relative_to(ROOT / "sample_sessions")
    lines = sample.read_bytes().splitlines(keepends=True)
    assert assert_live_equals_cold(path, lines) > 0


@pytest.mark.slow
def test_every_update_of_a_session_with_compactions_shows_the_reports_figures(
    tmp_path: Path,
) -> None:
    """Three copies of the demo session, each with its /compact and the requests after it:
    right after each boundary the system prompt is the one inferred before it, on both paths
    (the dashboard kept it while the report knew none, and simulated every earlier request's
    cache without it), and the context is the whole one the next request sends."""
    lines = copies(COMPACTED[0], 3)
    assert assert_live_equals_cold(tmp_path / "session.jsonl", lines) > 30

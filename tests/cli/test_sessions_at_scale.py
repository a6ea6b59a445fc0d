"""The sessions table with more sessions than it shows: each row first read quickly from the
newest bytes of its file (the report's context for a file those cover, a marked figure for a
bigger one), the rows shown in full, and a change re-reading only the file that changed."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sessions_home import cost_of, report_json

import ctxtop.engine.live.sessions_quick as sessions_quick
import ctxtop.engine.sessions.tail as tail
from ctxtop.engine.live.demo import demo_lines
from ctxtop.engine.live.sessions_quick import HEAD_BYTES, QUICK_BYTES
from ctxtop.engine.live.sessions_row import FULL, QUICK, TAIL
from ctxtop.engine.live.sessions_table import SHOWN_ROWS, SessionsTable
from ctxtop.engine.live.sessions_text import NOT_READ, TAIL_MARK, cells

PROJECTS = ".claude/projects"


def lay_out(home: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Path], Path]:
    """More sessions than a table shows, each one small enough for a quick read, and one big
    session beyond it."""
    monkeypatch.setenv("HOME", str(home))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "COPILOT_HOME"):
        monkeypatch.delenv(name, raising=False)
    lines = demo_lines()
    small = []
    for index in range(SHOWN_ROWS + 5):
        path = (
            home / PROJECTS / f"-home-dev-p{index}" / f"0b5d6b2c-0000-4000-8000-{index:012d}.jsonl"
        )
        path.parent.mkdir(parents=True)
        path.write_bytes(b"".join(lines[: 10 + index % 15]))
        assert path.stat().st_size <= QUICK_BYTES + HEAD_BYTES
        small.append(path)
    big = home / PROJECTS / "-home-dev-big" / "0b5d6b2c-0000-4000-8000-999999999999.jsonl"
    big.parent.mkdir(parents=True)
    big.write_bytes(b"".join(lines))
    assert big.stat().st_size > QUICK_BYTES + HEAD_BYTES
    return small, big


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """The session files opened (quick reads and full ones) from now on."""
    counts: Counter[str] = Counter()
    for module in (sessions_quick, tail):
        real = module.open_regular

        def counted(path: Path, *args: Any, real: Any = real) -> int:
            counts[str(path)] += 1
            return int(real(path, *args))

        monkeypatch.setattr(module, "open_regular", counted)
    return counts


def test_rows_are_read_quickly_then_in_full_when_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small, big = lay_out(tmp_path / "home", monkeypatch)
    table = SessionsTable()
    table.show([])  # nothing on screen yet
    table.start()
    rows = {row.key: row for row in table.rows()}
    assert set(rows) == {str(path) for path in [*small, big]}
    assert not table.pending()

    # A file the quick read covers: the report's context, fill and request count already.
    for path in small[:3]:
        row, report = rows[str(path)], report_json(path)
        assert row.figures == QUICK
        assert row.context_tokens == report["context_tokens"]["value"]
        assert row.context_source == report["context_tokens"]["source"]
        assert row.fill_percent == report["fill_percent"]
        assert row.requests == report["api_requests"]
        assert row.cost is None and row.requests_left is None
        assert cells(row, row.last_write)["cost"] == NOT_READ
    # A bigger one: its figure is of the newest bytes, and marked so; no count of requests.
    row = rows[str(big)]
    assert row.figures == TAIL and row.requests is None
    assert cells(row, row.last_write)["context"].endswith(TAIL_MARK)

    # Shown: read in full, the report's figures.
    table.show([str(big), str(small[0])])
    assert table.pending()
    table.fill()
    rows = {row.key: row for row in table.rows()}
    for path in (big, small[0]):
        row, report = rows[str(path)], report_json(path)
        assert row.figures == FULL
        assert row.context_tokens == report["context_tokens"]["value"]
        assert row.requests == report["api_requests"]
        assert row.requests_left == report["analysis"]["forecast"]["requests_left"]
        assert row.cost == cost_of(report)
        assert TAIL_MARK not in cells(row, row.last_write)["context"]


def test_a_change_reads_only_the_file_that_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: Counter[str]
) -> None:
    small, big = lay_out(tmp_path / "home", monkeypatch)
    table = SessionsTable()
    table.show([str(big)])
    table.start()
    assert set(opened) == {str(path) for path in [*small, big]}

    # Nothing written: looking at every session's mtime opens none.
    opened.clear()
    table.poll_all()
    table.tick()
    assert not opened

    # One quick row and the one followed in full grow: each of them is read, no other.
    lines = demo_lines()
    for path in (small[7], big):
        with path.open("ab") as out:
            out.write(lines[-1])
        later = path.stat().st_mtime + 1
        os.utime(path, (later, later))
    table.poll_all()
    assert set(opened) == {str(small[7]), str(big)}
    opened.clear()
    with small[8].open("ab") as out:
        out.write(lines[-1])
    table.changed([small[8]])
    assert set(opened) == {str(small[8])}
    row = next(row for row in table.rows() if row.key == str(small[8]))
    assert row.context_tokens == report_json(small[8])["context_tokens"]["value"]

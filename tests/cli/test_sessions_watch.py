"""The sessions table's engine and ``ctxtop sessions --watch``: rows from the agents' sample
sessions, kept current by reading only what changed, states over time, the settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sessions_home import NEW_SESSION, cost_of, report_json, sample_home

from engine.config import Settings, parse_settings
from engine.errors import InputError
from engine.live.demo import demo_lines
from engine.live.sessions_row import ENDED, IDLE, WAITING, WORKING
from engine.live.sessions_table import SessionsTable
from engine.live.sessions_watch import watch_rows


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_rows_follow_appends_new_files_and_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = time.time()
    home = sample_home(tmp_path / "home", monkeypatch, written=start - 60)
    clock = Clock(start)
    table = SessionsTable(active_minutes=30, clock=clock)
    table.start()
    rows = {row.key: row for row in table.rows()}
    assert len(rows) == len(table.tracked) >= 8
    codex = next(row for row in rows.values() if row.agent == "codex")
    report = report_json(Path(codex.key))
    assert codex.fill_percent == report["fill_percent"]
    assert codex.cost == cost_of(report)
    assert codex.state in (WORKING, WAITING)

    # A new file: read when notified, and only then.
    new = home / NEW_SESSION
    new.parent.mkdir(parents=True)
    lines = demo_lines()
    new.write_bytes(b"".join(lines[:40]))
    assert str(new) not in {row.key for row in table.rows()}
    table.changed([new])
    row = next(row for row in table.rows() if row.key == str(new))
    first = report_json(new)
    assert row.context_tokens == first["context_tokens"]["value"]
    # An append moves the row to the report's new figures.
    with new.open("ab") as out:
        out.write(b"".join(lines[40:70]))
    table.changed([new])
    grown = report_json(new)
    row = next(row for row in table.rows() if row.key == str(new))
    assert (
        row.context_tokens == grown["context_tokens"]["value"] != first["context_tokens"]["value"]
    )
    assert row.requests_left == grown["analysis"]["forecast"]["requests_left"]

    # Time passes: idle after 5 minutes without a write, gone after the active window.
    clock.now = start + 10 * 60
    assert {row.state for row in table.rows()} == {IDLE}
    clock.now = os.stat(new).st_mtime + 29 * 60
    table.tick()
    assert [row.key for row in table.rows()] == [str(new)]
    # A deleted session shows as ended, then leaves.
    new.unlink()
    table.changed([new])
    assert [row.state for row in table.rows()] == [ENDED]
    clock.now += 120
    table.tick()
    assert table.rows() == ()


def test_watch_rows_sees_a_new_session_through_notifications(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = sample_home(tmp_path / "home", monkeypatch)
    table = SessionsTable(active_minutes=30)
    stop = threading.Event()
    seen: list[set[str]] = []
    new = home / NEW_SESSION
    new.parent.mkdir(parents=True)

    def run() -> None:
        for rows in watch_rows(table, stop, heartbeat=60):
            seen.append({row.key for row in rows})
            if str(new) in seen[-1]:
                stop.set()

    worker = threading.Thread(target=run)
    worker.start()
    try:
        deadline = time.monotonic() + 60  # a safety limit, not a timing assertion
        while not seen and time.monotonic() < deadline:
            time.sleep(0.05)
        new.write_bytes(b"".join(demo_lines()[:40]))
        worker.join(timeout=60)
    finally:
        stop.set()
        worker.join()
    assert str(new) not in seen[0]
    assert str(new) in seen[-1]


def test_sessions_watch_json_prints_the_table(tmp_path: Path) -> None:
    home = tmp_path / "home"
    monkeypatch = pytest.MonkeyPatch()
    try:
        sample_home(home, monkeypatch)
        env = dict(os.environ)
    finally:
        monkeypatch.undo()
    process = subprocess.Popen(
        [sys.executable, "-m", "tui", "sessions", "--watch", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        rows = json.loads(process.stdout.readline())
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert {row["agent"] for row in rows} >= {"claude-code", "codex", "gemini-cli", "copilot-cli"}
    fills = [row["fill_percent"] for row in rows]
    assert fills == sorted(fills, reverse=True)
    assert any(row["children"] for row in rows)


def test_active_minutes_setting() -> None:
    assert Settings().active_minutes == 30
    assert parse_settings({"active_minutes": 5}).active_minutes == 5
    with pytest.raises(InputError, match="active_minutes"):
        parse_settings({"active_minutes": 0})

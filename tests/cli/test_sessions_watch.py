"""The sessions table's engine and ``ctxtop sessions --watch``: rows from the agents' sample
sessions, kept current by reading only what changed, states over time, the settings."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from opencode_db import load_sample, session_path, writer
from sessions_home import NEW_SESSION, cost_of, report_json, sample_home

from ctxtop.engine.config import Settings, parse_settings
from ctxtop.engine.errors import InputError
from ctxtop.engine.live.demo import demo_lines
from ctxtop.engine.live.sessions_row import COMPACTING, ENDED, IDLE, WAITING, WORKING
from ctxtop.engine.live.sessions_table import SessionsTable
from ctxtop.engine.live.sessions_watch import watch_rows


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


def _rows_seen(new: Path, act: Callable[[], object]) -> list[set[str]]:
    """The keys of each set of rows ``watch_rows`` yields, ``act`` done after the first, until
    a row of ``new`` is among them (or a minute passed: a safety limit, not a timing one)."""
    table = SessionsTable(active_minutes=30)
    stop = threading.Event()
    seen: list[set[str]] = []

    def run() -> None:
        for rows in watch_rows(table, stop, heartbeat=60):
            seen.append({row.key for row in rows})
            if str(new) in seen[-1]:
                stop.set()

    worker = threading.Thread(target=run)
    worker.start()
    try:
        deadline = time.monotonic() + 60
        while not seen and time.monotonic() < deadline:
            time.sleep(0.05)
        act()
        worker.join(timeout=60)
    finally:
        stop.set()
        worker.join()
    return seen


def test_watch_rows_sees_a_new_session_through_notifications(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = sample_home(tmp_path / "home", monkeypatch)
    new = home / NEW_SESSION
    new.parent.mkdir(parents=True)
    seen = _rows_seen(new, lambda: new.write_bytes(b"".join(demo_lines()[:40])))
    assert str(new) not in seen[0]
    assert str(new) in seen[-1]


def test_watch_rows_sees_a_session_in_a_directory_that_arrives_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new project directory whose session file was written before the watch on it was in
    place (here: the directory moved in whole, so its file is notified to nobody) still
    becomes a row, without waiting for the file's next write."""
    home = sample_home(tmp_path / "home", monkeypatch)
    new = home / NEW_SESSION
    outside = tmp_path / "elsewhere" / new.parent.name
    outside.mkdir(parents=True)
    (outside / new.name).write_bytes(b"".join(demo_lines()[:40]))

    def move_in() -> None:
        time.sleep(2.5)  # past the watch's first wake-up (its listing would find any file)
        os.rename(outside, new.parent)

    seen = _rows_seen(new, move_in)
    assert str(new) not in seen[0]
    assert str(new) in seen[-1]


AGENTS = {"claude-code", "codex", "gemini-cli", "copilot-cli"}


def _watch_json(home: Path) -> subprocess.Popen[str]:
    """``ctxtop sessions --watch --json`` with the agents' samples in ``home``."""
    monkeypatch = pytest.MonkeyPatch()
    try:
        sample_home(home, monkeypatch)
        env = dict(os.environ)
    finally:
        monkeypatch.undo()
    return subprocess.Popen(
        [sys.executable, "-m", "ctxtop", "sessions", "--watch", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_sessions_watch_json_prints_the_table(tmp_path: Path) -> None:
    process = _watch_json(tmp_path / "home")
    try:
        assert process.stdout is not None
        # The first tables may hold only the rows read so far (the quickest first, as on a
        # machine with thousands of sessions); every agent's rows follow in later tables.
        for _ in range(10):
            rows = json.loads(process.stdout.readline())
            if {row["agent"] for row in rows} >= AGENTS:
                break
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert {row["agent"] for row in rows} >= AGENTS
    fills = [row["fill_percent"] for row in rows]
    assert fills == sorted(fills, reverse=True)
    assert any(row["children"] for row in rows)


def test_active_minutes_setting() -> None:
    assert Settings().active_minutes == 30
    assert parse_settings({"active_minutes": 5}).active_minutes == 5
    with pytest.raises(InputError, match="active_minutes"):
        parse_settings({"active_minutes": 0})


COPILOT = Path(__file__).resolve().parents[1] / (
    "sessions/data/generated/copilot-cli/session-state/244e876e-1a43-4419-88f6-972d1b6e8877"
    "/events.jsonl"
)


def test_a_compaction_in_progress_shows_as_compacting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Copilot CLI logged ``session.compaction_start`` and not yet its ``_complete``; Claude
    Code's compaction agent wrote after the last compact boundary."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    lines = COPILOT.read_bytes().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if b"session.compaction_start" in line)
    copilot = home / ".copilot/session-state/244e876e-1a43-4419-88f6-972d1b6e8877/events.jsonl"
    copilot.parent.mkdir(parents=True)
    copilot.write_bytes(b"".join(lines[: start + 1]))
    claude = home / NEW_SESSION
    claude.parent.mkdir(parents=True)
    demo = demo_lines()
    claude.write_bytes(b"".join(demo[:70]))  # past the sample's /compact (line 65)
    table = SessionsTable()
    table.start()
    states = {row.agent: row.state for row in table.rows()}
    assert states["copilot-cli"] == COMPACTING
    assert states["claude-code"] != COMPACTING

    with copilot.open("ab") as out:
        out.write(b"".join(lines[start + 1 :]))
    agent = claude.with_suffix("") / "subagents" / "agent-acompact-5f2e9c1d0a7b3e64.jsonl"
    agent.parent.mkdir(parents=True)
    prompt = {
        "type": "user",
        "isSidechain": True,
        "agentId": "acompact-5f2e9c1d0a7b3e64",
        "sessionId": claude.stem,
        "uuid": "c-1",
        "parentUuid": None,
        "timestamp": "2099-01-01T00:00:00.000Z",  # after the last compact boundary
        "message": {"role": "user", "content": "Summarise the conversation so far."},
    }
    agent.write_text(json.dumps(prompt) + "\n")
    table.changed([copilot, agent])
    # The adapter lists its sub-agents' directory again a second later: the ticks read it then.
    deadline = time.monotonic() + 30  # a safety limit, not a timing assertion
    while table.recheck and time.monotonic() < deadline:
        time.sleep(0.1)
        table.tick()
    states = {row.agent: row.state for row in table.rows()}
    assert states["copilot-cli"] != COMPACTING
    assert states["claude-code"] == COMPACTING


def test_each_agents_new_session_files_are_recognised(tmp_path: Path) -> None:
    """A file written where an agent keeps its sessions becomes a row when notified; files
    beside them that are not sessions of their own (sub-agents, tool outputs) do not."""
    from ctxtop.engine.live.sessions_table import agent_roots

    roots = agent_roots({}, tmp_path)
    sessions = [
        ".claude/projects/-home-dev-x/0b5d6b2c-6a65-4f0e-9d1e-5f0e6c3a9a11.jsonl",
        ".codex/sessions/2026/11/25/rollout-2026-11-25T09-00-00-01a2.jsonl",
        ".gemini/tmp/calc/chats/session-2026-11-25T09-00-196d3f0b.jsonl",
        ".copilot/session-state/244e876e-1a43-4419-88f6-972d1b6e8877/events.jsonl",
    ]
    others = [
        ".claude/projects/-home-dev-x/agent-a580d84.jsonl",
        ".claude/projects/-home-dev-x/0b5d6b2c/subagents/agent-a1.jsonl",
        ".codex/config.toml",
        ".gemini/tmp/calc/chats/196d3f0b/f10f71a1.jsonl",
        ".copilot/session-state/244e876e/workspace.yaml",
    ]
    for relative in sessions:
        assert [r.agent for r in roots if r.holds_session(tmp_path / relative)], relative
    for relative in others:
        assert not any(r.holds_session(tmp_path / relative) for r in roots), relative


def test_watch_shows_log_text_but_never_sends_it_to_the_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A working directory holding escape sequences (an OSC 52 clipboard write, a clear screen)
    is written out as ``\\x1b`` in the table, never sent as is."""
    home = tmp_path / "home"
    session = home / NEW_SESSION
    session.parent.mkdir(parents=True)
    hostile = json.dumps("/home/dev/\x1b]52;c;ZXZpbA==\x07\x1b[2Jevil")[1:-1].encode()
    session.write_bytes(b"".join(demo_lines()[:40]).replace(b"/home/dev/demo-project", hostile))
    env = {**os.environ, "HOME": str(home)}
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "COPILOT_HOME"):
        env.pop(name, None)
    process = subprocess.Popen(
        [sys.executable, "-m", "ctxtop", "sessions", "--watch"], env=env, stdout=subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(3)]  # title, header, the row
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert b"1 active" in lines[0]
    row = lines[2]
    assert b"\\x1b" in row and b"evil" in row
    assert not any(byte < 0x20 for byte in row.rstrip(b"\n")), row


def test_ctrl_c_quits_the_watch_at_once(tmp_path: Path) -> None:
    """Ctrl+C (SIGINT) ends ``sessions --watch`` with exit 130: watchfiles used to take the
    interrupt for itself, print "KeyboardInterrupt caught, stopping watch" and the loop
    watched on."""
    process = _watch_json(tmp_path / "home")
    try:
        assert process.stdout is not None
        assert json.loads(process.stdout.readline())  # the first table: the watch is on
        time.sleep(1)  # into the notifications' wait (an interrupt anywhere must end it)
        process.send_signal(signal.SIGINT)
        _, errors = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130
    assert "KeyboardInterrupt" not in errors


def test_watch_rows_sees_a_new_opencode_session_in_its_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session OpenCode starts in its database (a change of the database's WAL, no new file)
    becomes a row through the notifications."""
    home = sample_home(tmp_path / "home", monkeypatch)
    database = home / ".local/share/opencode/opencode.db"
    load_sample(database)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    new = session_path(database, "ses_new")
    agent = writer(database)  # OpenCode running: its WAL is there before the new session

    def start_a_session() -> None:
        now = int(time.time() * 1000)
        agent.execute(
            "INSERT INTO session (id, project_id, slug, directory, title, version,"
            " time_created, time_updated) VALUES ('ses_new', 'p', 's', '/w', 'New', '1.18.33',"
            " ?, ?)",
            (now, now),
        )

    try:
        seen = _rows_seen(new, start_a_session)
    finally:
        agent.close()
    assert str(new) not in seen[0]
    assert str(new) in seen[-1]

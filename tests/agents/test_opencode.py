"""OpenCode: sessions read from its SQLite database (``<opencode.db>/<session id>``), checked
against what the scripted model server answered the real CLI (sample_sessions/opencode/), read
live while rows are written and rewritten, without ever writing to or locking the database."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from opencode_db import (
    SESSION,
    SUBAGENT,
    load_sample,
    sample_rows,
    schema_only,
    server_usage,
    session_path,
    writer,
)

from ctxtop.engine.agents.discovery import discover
from ctxtop.engine.agents.opencode import place
from ctxtop.engine.agents.opencode.reader import OpenCodeAdapter
from ctxtop.engine.agents.session_reader import SessionReader, read_session
from ctxtop.engine.cli.main import main
from ctxtop.engine.errors import InputError
from ctxtop.engine.live.locate import choose
from ctxtop.engine.live.sessions_table import SessionsTable


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    return load_sample(tmp_path / "opencode.db")


def answered(kind: str) -> list[tuple[int, int, int]]:
    """(prompt, completion, cached) of each request the server answered, of one kind."""
    found = []
    for record in server_usage():
        if record["kind"] == kind:
            usage = record["usage"]
            cached = usage["prompt_tokens_details"]["cached_tokens"]
            found.append((usage["prompt_tokens"], usage["completion_tokens"], cached))
    return found


def test_every_request_is_the_one_the_server_answered(sample: Path) -> None:
    state = read_session(sample)
    sub = state.subagents[SUBAGENT]
    seen = [
        (r.usage.input_tokens_total, r.usage.output_tokens, r.usage.cache_read_tokens)
        for r in (*state.responses.values(), *sub.responses.values())
    ]
    # Every model call but the title's (OpenCode keeps only the title) and in the same order.
    server = answered("main") + answered("compact")
    assert sorted(seen) == sorted(server)
    assert len(answered("side")) == 1 and state.title == "Fix division by zero in calc"
    assert state.api_requests == 14 and sub.api_requests == 2
    # The last prompt is the server's last answer.
    last = state.last_response
    assert last is not None
    final = server_usage()[-1]["usage"]
    assert last.usage.input_tokens_total == final["prompt_tokens"] == 8_576
    assert last.usage.output_tokens == final["completion_tokens"] == 43


def test_totals_equal_the_sessions_own_aggregates(sample: Path, tmp_path: Path) -> None:
    state = read_session(sample)
    with sqlite3.connect(tmp_path / "opencode.db") as db:
        rows = {
            row[0]: row[1:]
            for row in db.execute(
                "SELECT id, tokens_input, tokens_output, tokens_reasoning, tokens_cache_read,"
                " tokens_cache_write FROM session"
            )
        }
    for session_id, figures in ((SESSION, state), (SUBAGENT, state.subagents[SUBAGENT])):
        uncached, output, reasoning, read, write = rows[session_id]
        totals = figures.totals
        assert totals.input_tokens == uncached and totals.cache_read_tokens == read
        assert totals.output_tokens == output + reasoning  # reasoning is output
        assert totals.reasoning_tokens == reasoning == (20 if session_id == SESSION else 0)
        assert totals.cache_write_tokens == write


def test_the_auto_compaction_and_the_context_after_it(sample: Path) -> None:
    state = read_session(sample)
    [compaction] = state.compactions
    main = [prompt for prompt, _, _ in answered("main")]
    overflowed = main.index(109_486)  # the step whose usage_pad passed the usable 92,000
    # Before: that step's prompt and output (the server's 109,486 + 62); after: the prompt of
    # the first request after the summary call.
    assert compaction.trigger == "auto"
    assert compaction.pre_tokens == 109_486 + 62
    assert compaction.post_tokens == 7_843 == main[overflowed + 1]
    assert compaction.post_source == "request"
    # The model sees from the compaction request on: "What did we do so far?", the summary,
    # the synthetic "Continue…" and what followed (MessageV2.filterCompacted).
    first, summary, resumed = state.context[:3]
    assert first.blocks[0].text == "What did we do so far?"
    assert summary.kind == "compact_summary" and summary.blocks[0].text.startswith("## Goal")
    assert resumed.blocks[0].text.startswith("Continue if you have next steps")
    assert state.context[-1].response_key == state.last_response.key  # type: ignore[union-attr]


def test_tool_calls_results_and_the_subagent(sample: Path) -> None:
    state = read_session(sample)
    names = sorted(call.name for call in state.tools.values())
    assert names == ["bash"] * 6 + ["edit", "read", "read", "task", "write"]
    largest = max(state.tools.values(), key=lambda call: call.result_chars)
    assert largest.name == "bash" and largest.result_chars > 20_000  # head -n 370 server.log
    sub = state.subagents[SUBAGENT]
    assert sub.description == "Find TODO comments (@explore subagent)"
    task = next(call for call in state.tools.values() if call.name == "task")
    assert sub.parent_tool_call_id == task.call_id
    assert [call.name for call in sub.tools.values()] == ["grep"]


def test_the_report_takes_the_window_and_compaction_point_from_opencodes_config(
    sample: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    env = write_config(
        tmp_path,
        '{"provider": {"fake": {"models": {"fake-coder": '
        '{"limit": {"context": 100000, "output": 8000}}}}}}',
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", env["XDG_CONFIG_HOME"])
    assert main(["report", str(sample), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["agent"] == "opencode" and report["api_requests"] == 14
    assert report["context_window"] == 100_000 and report["autocompact_at"] == 92_000
    assert report["context_tokens"] == {**report["context_tokens"], "value": 8_619}
    assert report["last_request"]["input_tokens_total"] == 8_576
    assert report["totals"] == {
        "input": 17_876,
        "output": 1_195,
        "cache_read": 191_872,
        "cache_write": 0,
    }


class Writes:
    """Rows written as OpenCode writes them: ``time_updated`` is the time of each write."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.now = 1_795_917_000_000  # after the sample's own times

    def put(self, table: str, row: tuple[object, ...]) -> None:
        self.now += 1
        updated = ("session", "message", "part").index(table) and -2  # time_updated's column
        row = (*row,) if table == "session" else (*row[:updated], self.now, row[-1])
        marks = ", ".join("?" * len(row))
        self.db.execute(f"INSERT OR REPLACE INTO {table} VALUES ({marks})", row)


def test_a_session_read_live_as_rows_arrive_and_change_equals_the_finished_one(
    tmp_path: Path, sample: Path
) -> None:
    finished = read_session(sample)
    database = tmp_path / "live" / "opencode.db"
    database.parent.mkdir()
    writes = Writes(schema_only(database))
    reader = SessionReader(session_path(database))
    for row in sample_rows("session"):
        writes.put("session", row)
    parts = sample_rows("part")
    compacting: list[bool] = []  # after each message row is whole
    for message in sample_rows("message"):
        data = json.loads(str(message[4]))
        if data["role"] == "assistant":
            # As OpenCode does: the step's message first with no usage, then its parts, then
            # the message again with its tokens.
            started = {
                **data,
                "tokens": {
                    "input": 0,
                    "output": 0,
                    "reasoning": 0,
                    "cache": {"read": 0, "write": 0},
                },
            }
            started.pop("finish", None)
            writes.put("message", (*message[:4], json.dumps(started)))
            reader.poll(as_it_stands=True)
        for part in (p for p in parts if p[1] == message[0]):
            writes.put("part", part)
            reader.poll(as_it_stands=True)
        writes.put("message", message)
        reader.poll(as_it_stands=True)
        if message[1] == SESSION:
            assert reader.adapter is not None
            compacting.append(reader.adapter.compacting())
    assert not reader.poll(as_it_stands=True)  # nothing written: nothing read
    # Compacting from the compaction request until its summary call finished.
    assert compacting.count(True) == 1 and compacting.index(True) == 9
    live = reader.require_state()
    assert live.totals == finished.totals and live.api_requests == finished.api_requests
    assert live.last_response is not None and finished.last_response is not None
    assert live.last_response.key == finished.last_response.key
    assert live.last_response.usage == finished.last_response.usage
    assert [(c.trigger, c.pre_tokens, c.post_tokens) for c in live.compactions] == [
        (c.trigger, c.pre_tokens, c.post_tokens) for c in finished.compactions
    ]
    assert [m.id for m in live.context] == [m.id for m in finished.context]
    assert live.subagents[SUBAGENT].totals == finished.subagents[SUBAGENT].totals


def test_a_deleted_message_starts_the_reading_over(tmp_path: Path, sample: Path) -> None:
    reader = SessionReader(sample)
    before = reader.require_state().api_requests
    with sqlite3.connect(tmp_path / "opencode.db") as db:  # as a revert does
        last = db.execute(
            "SELECT id FROM message WHERE session_id = ? ORDER BY id DESC LIMIT 1", (SESSION,)
        ).fetchone()[0]
        db.execute("DELETE FROM part WHERE message_id = ?", (last,))
        db.execute("DELETE FROM message WHERE id = ?", (last,))
    reader.poll(as_it_stands=True)
    assert reader.require_state().api_requests == before - 1


def digest(*paths: Path) -> list[str]:
    return [hashlib.sha256(path.read_bytes()).hexdigest() for path in paths]


def listing(directory: Path) -> dict[str, str]:
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in directory.iterdir()
    }


def test_a_database_no_agent_has_open_is_read_without_a_file_written(tmp_path: Path) -> None:
    session = load_sample(tmp_path / "opencode.db")
    before = listing(tmp_path)
    assert list(before) == ["opencode.db"]  # as OpenCode leaves it when it exits
    assert read_session(session).api_requests == 14
    assert listing(tmp_path) == before  # no -wal or -shm left beside it, not a byte changed


def test_while_the_agent_writes_the_database_is_never_written_nor_locked(tmp_path: Path) -> None:
    database = tmp_path / "opencode.db"
    session = load_sample(database)
    agent = sqlite3.connect(database, isolation_level=None, timeout=0)  # fails on any lock
    agent.execute("PRAGMA journal_mode = WAL")
    agent.execute("UPDATE session SET title = 'Renamed' WHERE id = ?", (SESSION,))
    stored = ("opencode.db", "opencode.db-wal")
    before = listing(tmp_path)
    reader = SessionReader(session)
    assert reader.require_state().title == "Renamed"  # what sits in the WAL is read
    # Not a byte of the database or its WAL changed (a WAL reader marks what it reads in the
    # shared-memory index, -shm, as every reader of the file does).
    assert [listing(tmp_path)[name] for name in stored] == [before[name] for name in stored]
    agent.execute("BEGIN IMMEDIATE")
    agent.execute("UPDATE session SET title = 'Again' WHERE id = ?", (SESSION,))
    reader.poll(as_it_stands=True)  # a read during the agent's open write transaction
    assert reader.require_state().title == "Renamed"  # what was committed
    agent.execute("COMMIT")
    busy, _, _ = agent.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    assert busy == 0  # nothing of ctxtop's kept the agent from checkpointing
    reader.poll(as_it_stands=True)
    assert reader.require_state().title == "Again"
    agent.close()  # the agent exits while ctxtop still follows the session
    assert sorted(listing(tmp_path)) == ["opencode.db"]  # it cleaned up its WAL as usual


def test_an_unknown_session_or_a_file_that_is_no_database_is_one_line(tmp_path: Path) -> None:
    load_sample(tmp_path / "opencode.db")
    missing = session_path(tmp_path / "opencode.db", "ses_nosuchsession")
    with pytest.raises(InputError, match=r"opencode\.db/ses_nosuchsession: cannot read: "):
        read_session(missing)
    junk = tmp_path / "junk.db"
    junk.write_text("not a database\n")
    with pytest.raises(InputError, match="not an OpenCode database"):
        read_session(session_path(junk, "ses_x"))


def test_discovery_lists_top_level_sessions_where_opencode_keeps_them(tmp_path: Path) -> None:
    default = tmp_path / ".local/share/opencode/opencode.db"
    load_sample(default)
    listed = list(OpenCodeAdapter.discover({}, tmp_path))
    assert listed == [session_path(default)]  # the sub-agent is read with its parent
    xdg = tmp_path / "xdg"
    load_sample(xdg / "opencode/opencode-local.db")  # another channel's database
    found = list(OpenCodeAdapter.discover({"XDG_DATA_HOME": str(xdg)}, tmp_path))
    assert found == [session_path(xdg / "opencode/opencode-local.db")]
    named = {"OPENCODE_DB": str(default)}
    assert list(OpenCodeAdapter.discover(named, tmp_path / "elsewhere")) == listed
    relative = {"XDG_DATA_HOME": str(xdg), "OPENCODE_DB": "opencode-local.db"}
    assert list(OpenCodeAdapter.discover(relative, tmp_path)) == found
    [entry] = discover("opencode", env={}, home=tmp_path)
    assert entry.path == session_path(default) and entry.mtime == pytest.approx(1795916217.459)


def write_config(home: Path, text: str) -> dict[str, str]:
    config = home / "config" / "opencode" / "opencode.jsonc"
    config.parent.mkdir(parents=True)
    config.write_text(text)
    return {"XDG_CONFIG_HOME": str(home / "config")}


def test_the_compaction_point_follows_opencodes_rule_and_the_users_config(
    tmp_path: Path,
) -> None:
    # The sample's own config: context 100,000, output 8,000 → usable 92,000, which the
    # step of 109,548 tokens passed.
    env = write_config(
        tmp_path,
        """{
          // as the sample run had it
          "provider": {"fake": {"models": {"fake-coder": {
            "limit": {"context": 100000, "output": 8000},}}}},
        }""",
    )
    assert place.compaction_point(100_000, "fake-coder", env, tmp_path) == 92_000
    assert place.model_limits("fake-coder", env, tmp_path).context == 100_000
    # No output limit: OpenCode reserves its 32,000 maximum.
    assert place.compaction_point(200_000, "unknown-model", env, tmp_path) == 168_000
    other = tmp_path / "other"
    env = write_config(
        other,
        '{"compaction": {"reserved": 5000}, "provider": {"p": {"models": {"m": '
        '{"limit": {"context": 400000, "input": 272000, "output": 128000}}}}}}',
    )
    assert place.compaction_point(400_000, "p/m", env, other) == 272_000 - 5_000
    off = tmp_path / "off"
    env = write_config(off, '{"compaction": {"auto": false}}')
    assert place.compaction_point(200_000, "m", env, off) is None


SAMPLE_WRITTEN = 1_795_916_217.481  # the sample session's last update (its row, epoch s)


def test_ctxtop_sessions_and_ctxtop_alone_find_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    session = load_sample(tmp_path / ".local/share/opencode/opencode.db")
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "OPENCODE_DB"):
        monkeypatch.delenv(name, raising=False)
    assert main(["sessions", "--agent", "opencode", "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["file"] == str(session) and row["api_requests"] == 14
    assert row["title"] == "Fix division by zero in calc" and row["context_tokens"] == 8_619
    target = choose(None, None)  # what ``ctxtop`` with no flags follows
    assert target.path == session and target.follow_newest


def test_the_sessions_table_follows_the_database_as_the_agent_writes(tmp_path: Path) -> None:
    database = tmp_path / ".local/share/opencode/opencode.db"
    session = load_sample(database)
    now = [SAMPLE_WRITTEN + 60]
    table = SessionsTable(env={}, home=tmp_path, clock=lambda: now[0])
    table.start()
    [row] = table.rows()
    assert row.key == str(session) and row.agent == "opencode" and row.requests == 14
    assert [child.title for child in row.children] == ["Find TODO comments (@explore subagent)"]
    # The agent starts another session and answers once in the first: one change of its WAL.
    agent = writer(database)
    later = int(now[0] * 1000)
    agent.execute(
        "INSERT INTO session (id, project_id, slug, directory, title, version, time_created,"
        " time_updated) VALUES ('ses_new', 'p', 's', '/w', 'New one', '1.18.33', ?, ?)",
        (later, later),
    )
    [last] = [m for m in sample_rows("message") if m[0] == "msg_224f2b9fe001YS5XDjWlXUE47R"]
    answer = json.loads(str(last[4]))
    answer["tokens"] = {
        "input": 100,
        "output": 10,
        "reasoning": 0,
        "cache": {"read": 8_600, "write": 0},
    }
    agent.execute(
        "INSERT INTO message VALUES ('msg_zzz', ?, ?, ?, ?)",
        (SESSION, later, later, json.dumps(answer)),
    )
    table.changed([database.with_name("opencode.db-wal")])
    rows = {row.key: row for row in table.rows()}
    assert rows[str(session)].requests == 15
    assert str(session_path(database, "ses_new")) in rows  # found without listing again
    agent.close()


def test_the_database_itself_is_refused_with_how_to_name_a_session(sample: Path) -> None:
    with pytest.raises(InputError) as caught:
        read_session(sample.parent)
    assert str(caught.value) == (
        f"{sample.parent}: an OpenCode database: name one of its sessions, e.g. {sample}"
        " (ctxtop sessions lists them)"
    )


def test_ctxtop_compactions_shows_what_opencodes_compaction_dropped(
    sample: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compactions", str(sample), "--json"]) == 0
    history = json.loads(capsys.readouterr().out)
    [compaction] = history["compactions"]
    assert (compaction["trigger"], compaction["tokens_before"], compaction["tokens_after"]) == (
        "auto",
        109_548,
        7_843,
    )
    # The user's two prompts; OpenCode's own "What did we do so far?" and "Continue…" are not.
    users = [item["label"] for item in compaction["user_messages"]]
    assert [label[:20] for label in users] == ['"The div function in', '"Check the first few']
    assert "restore is not possible for opencode sessions" in history["restore"]


def test_a_database_under_a_path_with_spaces_and_uri_characters_reads(tmp_path: Path) -> None:
    session = load_sample(tmp_path / "my data #1 ?x=%20" / "opencode.db")
    assert read_session(session).api_requests == 14

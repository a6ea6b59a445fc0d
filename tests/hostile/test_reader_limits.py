"""A 50 MB single line, and a file truncated or replaced while it is being tailed."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from cli_run import SAMPLES, assert_clean_end, run_subprocess

from ctxtop.engine.agents.session_reader import SessionReader

LINE_BYTES = 50 * 1024 * 1024
# The stated bound for reading a log with one 50 MB line: the interpreter with ctxtop's modules
# (about 100 MB) plus six times the line (its raw bytes, the decoded text and the parsed value,
# each held at most briefly twice). Measured: see the README's Safety section.
MEMORY_BOUND_KB = 100 * 1024 + 6 * LINE_BYTES // 1024


def _big_line_session(tmp_path: Path, line: bytes) -> Path:
    lines = SAMPLES["openai-messages"].read_bytes().splitlines()
    path = tmp_path / "big.jsonl"
    with open(path, "wb") as out:
        out.write(b"\n".join(lines[:3]) + b"\n")
        out.write(line + b"\n")
        out.write(b"\n".join(lines[3:]) + b"\n")
    return path


def _peak_kb(stderr: str) -> int:
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("peak-kb "), stderr
    return int(last.split()[1])


def test_a_50_mb_tool_result_line_stays_within_the_memory_bound(tmp_path: Path) -> None:
    body = "x" * (LINE_BYTES - 100)
    record = {"role": "tool", "tool_call_id": "call_big", "content": body}
    path = _big_line_session(tmp_path, json.dumps(record).encode())
    ended = run_subprocess("report", str(path), measure=True, timeout=240)
    assert ended.code == 0, ended.err
    assert "Traceback" not in ended.err
    assert _peak_kb(ended.err) < MEMORY_BOUND_KB


def test_a_50_mb_line_that_is_not_json_is_skipped_within_the_bound(tmp_path: Path) -> None:
    path = _big_line_session(tmp_path, b'{"role": "tool", "content": "' + b"y" * LINE_BYTES)
    ended = run_subprocess("report", str(path), "--json", measure=True, timeout=240)
    assert_clean_end(ended, path)
    assert ended.code == 0
    skipped = json.loads(ended.out)["skipped_lines"]
    assert [row["line"] for row in skipped] == [4]
    assert _peak_kb(ended.err) < MEMORY_BOUND_KB


def test_a_file_truncated_and_replaced_while_tailed(tmp_path: Path) -> None:
    """The agent's file is cut, rewritten and replaced (new inode) while ctxtop polls it: every
    poll ends without an exception, and the last one shows exactly the final file."""
    lines = SAMPLES["openai-messages"].read_bytes().splitlines(keepends=True)
    path = tmp_path / "agent-loop.jsonl"
    path.write_bytes(b"".join(lines))
    reader = SessionReader(path)
    reader.poll()
    stop = threading.Event()
    failures: list[BaseException] = []

    def poll_forever() -> None:
        while not stop.is_set():
            try:
                reader.poll()
            except BaseException as error:  # what the test is about
                failures.append(error)
                return

    poller = threading.Thread(target=poll_forever)
    poller.start()
    try:
        for round_no in range(60):
            keep = lines[: 1 + round_no % len(lines)]
            if round_no % 3 == 0:
                with open(path, "r+b") as handle:  # cut in place, mid-line
                    handle.truncate(max(len(b"".join(keep)) - 7, 0))
            elif round_no % 3 == 1:
                replacement = tmp_path / "replacement.jsonl"
                replacement.write_bytes(b"".join(keep))
                os.replace(replacement, path)  # a new inode under the same name
            else:
                with open(path, "ab") as handle:
                    handle.write(b"".join(lines[len(keep) :]))
    finally:
        stop.set()
        poller.join(timeout=60)
    assert not poller.is_alive()
    assert failures == []
    reader.poll()
    fresh = SessionReader(path)
    fresh.poll()
    assert reader.state is not None and fresh.state is not None
    assert [m.role for m in reader.state.context] == [m.role for m in fresh.state.context]
    assert reader.state.totals == fresh.state.totals


def test_millions_of_records_of_no_known_agent_end_promptly(tmp_path: Path) -> None:
    """7 million tiny JSON records no adapter recognises: a one-line error, not minutes of
    detection attempts (the subprocess timeout is the hang check), and not a million line
    objects at once (the memory bound: 200 MB; it took 320 MB)."""
    path = tmp_path / "unknown.jsonl"
    path.write_bytes(b'{"a":1}\n' * 7_000_000)
    ended = run_subprocess("report", str(path), timeout=90, measure=True)
    assert "Traceback" not in ended.err
    assert ended.code == 2 and "not a session log" in ended.err.splitlines()[0]
    assert _peak_kb(ended.err) < 200 * 1024


def test_a_named_pipe_in_place_of_a_session_is_refused(tmp_path: Path) -> None:
    """Opening a FIFO for reading waits for a writer that never comes: a hang, unless ctxtop
    refuses files that are not regular files."""
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    for command in (["report"], ["edit", "--dry-run"], ["compact", "--dry-run"]):
        ended = run_subprocess(command[0], str(fifo), *command[1:], timeout=60)
        assert_clean_end(ended, fifo)
        assert ended.code == 2 and "not a regular file" in ended.err


def test_an_unreadable_sub_agent_file_does_not_hide_the_session(tmp_path: Path) -> None:
    """A Claude Code sub-agent transcript that is a FIFO, or a directory, beside the session: the
    session is still reported, the odd file named among the skipped."""
    source = SAMPLES["claude-code"]
    session = tmp_path / source.name
    session.write_bytes(source.read_bytes())
    subagents = tmp_path / source.stem / "subagents"
    subagents.mkdir(parents=True)
    os.mkfifo(subagents / "agent-fifo.jsonl")
    (subagents / "agent-dir.jsonl").mkdir()
    ended = run_subprocess("report", str(session), "--json", timeout=60)
    assert ended.code == 0, ended.err
    report = json.loads(ended.out)
    assert report["api_requests"] > 0
    skipped = {row["file"] for row in report["skipped_lines"]}
    assert {str(subagents / "agent-fifo.jsonl"), str(subagents / "agent-dir.jsonl")} <= skipped


def _fifo_beside(agent: str, tmp_path: Path) -> Path:
    """The agent's sample session copied under tmp_path, with named pipes where the reader
    looks for related files (sub-agent transcripts, metadata, the project root)."""
    sample = SAMPLES[agent]
    if agent == "gemini-cli":
        chats = tmp_path / ".gemini" / "tmp" / "project" / "chats"
        chats.mkdir(parents=True)
        os.mkfifo(chats.parent / ".project_root")
        os.mkfifo(tmp_path / ".gemini" / "settings.json")
        session = chats / sample.name
    else:
        session = tmp_path / sample.name
        os.mkfifo(tmp_path / ("agent-fifo.jsonl" if agent == "claude-code" else "rollout-x.jsonl"))
        if agent == "claude-code":
            subagents = tmp_path / sample.stem / "subagents"
            subagents.mkdir(parents=True)
            (subagents / "agent-a1.jsonl").write_bytes(b"")
            os.mkfifo(subagents / "agent-a1.meta.json")
    session.write_bytes(sample.read_bytes())
    return session


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini-cli"])
def test_named_pipes_where_the_reader_looks_for_related_files(tmp_path: Path, agent: str) -> None:
    session = _fifo_beside(agent, tmp_path)
    commands = [["report"]]
    if agent != "gemini-cli":  # edit and compact read the session the same way, then more
        commands += [
            ["edit", "--dry-run"],
            ["compact", "--dry-run", "--json", "--keep-rounds", "0"],
        ]
    for argv in commands:
        ended = run_subprocess(argv[0], str(session), *argv[1:], timeout=60)
        assert_clean_end(ended, session)
        assert ended.code == 0 or "nothing to" in ended.err


# edit and compact hold the session's bytes, its records, the fork's records and bytes, and the
# fork read back: the stated bound for them is the interpreter plus eight times the line.
EDIT_MEMORY_BOUND_KB = 100 * 1024 + 8 * LINE_BYTES // 1024


@pytest.fixture(scope="session")
def claude_session_with_a_50_mb_result(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once for the commands below, which only read it."""
    tmp_path = tmp_path_factory.mktemp("claude-50-mb")
    lines = SAMPLES["claude-code"].read_bytes().splitlines()
    for number, raw in enumerate(lines):
        record = json.loads(raw)
        content = record.get("message", {}).get("content")
        parts = content if isinstance(content, list) else []
        results = [p for p in parts if isinstance(p, dict) and p.get("type") == "tool_result"]
        if results:
            results[0]["content"] = "word " * (LINE_BYTES // 5)
            lines[number] = json.dumps(record).encode()
            break
    path = tmp_path / SAMPLES["claude-code"].name
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.mark.parametrize(
    ("argv", "bound_kb"),
    [
        (["report"], MEMORY_BOUND_KB),
        (["edit", "--dry-run", "--keep-cycles", "0"], EDIT_MEMORY_BOUND_KB),
        (["compact", "--dry-run", "--keep-rounds", "0"], EDIT_MEMORY_BOUND_KB),
    ],
)
def test_a_50_mb_claude_code_tool_result_in_every_command(
    claude_session_with_a_50_mb_result: Path, argv: list[str], bound_kb: int
) -> None:
    path = claude_session_with_a_50_mb_result
    before = path.stat()
    ended = run_subprocess(argv[0], str(path), *argv[1:], measure=True, timeout=240)
    assert ended.code == 0, ended.err
    assert "Traceback" not in ended.err
    assert _peak_kb(ended.err) < bound_kb
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)

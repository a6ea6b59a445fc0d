"""Live tailing: appends, partial lines, truncation, replacement, bad and huge lines."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sessions_expect import ENC, claude_responses, records, result_text

from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.cli.main import main
from ctxtop.engine.live.watch import wake_ups
from ctxtop.engine.sessions.model import SessionState
from ctxtop.engine.sessions.report_json import build_report
from ctxtop.engine.sessions.tokenizer_factor import LEARNT_OVER

DATA = Path(__file__).parent / "data" / "real" / "claude-code"
PROJECT = DATA / "generated-cli-2.1.330" / "projects" / "-home-dev-demo-project"
SESSION = "b7f51370-d8c8-469b-95e6-e7046fb8d0f3"
PUBLIC = DATA / "public-d-kimuson-claude-code-viewer" / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"


def _report(reader: SessionReader) -> dict[str, Any]:
    read_all(reader)
    assert reader.adapter is not None
    report = build_report(reader.adapter)
    report.pop("file")
    return report


def follow(
    reader: SessionReader, stop: threading.Event, poll_interval: float, use_watchfiles: bool
) -> Iterator[SessionState]:
    """The session's state now, then again after every change, until ``stop`` is set, as the
    dashboard's feed follows it (``wake_ups``, then ``poll``). A file that does not exist yet or
    is still empty is waited for; one that holds something no adapter recognises raises
    ``InputError`` at once."""
    if _has_content(reader.path) or reader.path.is_dir():
        yield read_all(reader)
    for _ in wake_ups(reader, stop, poll_interval, use_watchfiles):
        if stop.is_set():
            return
        known = reader.state is not None
        changed = False
        while reader.poll():  # drain: companions found on one poll are read by the next
            changed = True
        state = reader.state
        if state is not None and (changed or not known):
            yield state


def _has_content(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


@contextlib.contextmanager
def _following(path: Path, use_watchfiles: bool) -> Iterator[Iterator[SessionState]]:
    """``follow`` with a stop event; a timer sets it after 20 s as a safety net (no assertion)."""
    stop = threading.Event()
    timer = threading.Timer(20, stop.set)
    timer.start()
    try:
        yield follow(SessionReader(path), stop, 0.05, use_watchfiles)
    finally:
        stop.set()
        timer.cancel()


def _session_copy(tmp_path: Path) -> tuple[Path, bytes]:
    """The 2.1.330 session with its sub-agent directory, the main file left empty."""
    shutil.copytree(PROJECT / SESSION, tmp_path / SESSION)
    target = tmp_path / f"{SESSION}.jsonl"
    target.write_bytes(b"")
    return target, (PROJECT / f"{SESSION}.jsonl").read_bytes()


def _append(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


def test_appending_in_random_pieces_gives_the_one_shot_report(tmp_path: Path) -> None:
    target, data = _session_copy(tmp_path)
    reader = SessionReader(target)
    rng = random.Random(7)
    position = 0
    while position < len(data):
        step = rng.randint(1, 9000)
        _append(target, data[position : position + step])
        position += step
        reader.poll()
        if reader.adapter is not None:
            build_report(reader.adapter)  # a dashboard reports after every change
    live = _report(reader)
    fresh = _report(SessionReader(target))
    assert live == fresh
    assert live["api_requests"] == len(claude_responses(records(target)))
    assert live["subagents"][0]["api_requests"] > 0


def test_a_partial_last_line_waits_for_its_newline(tmp_path: Path) -> None:
    lines = PUBLIC.read_bytes().splitlines(keepends=True)
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"".join(lines[:5]) + lines[5][:40])
    reader = SessionReader(target)
    state = read_all(reader)
    assert state.lines_read == 5
    assert state.skipped == []
    _append(target, lines[5][40:])
    reader.poll()
    assert state.lines_read == 6
    assert state.skipped == []


def test_only_appended_bytes_are_read_after_the_first_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = PUBLIC.read_bytes().splitlines(keepends=True)
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"".join(lines[:-3]))
    reader = SessionReader(target)
    read_all(reader)
    read_sizes: list[int] = []
    real_read = os.read

    def counting_read(fd: int, size: int) -> bytes:
        chunk = real_read(fd, size)
        read_sizes.append(len(chunk))
        return chunk

    monkeypatch.setattr(os, "read", counting_read)
    appended = b"".join(lines[-3:])
    _append(target, appended)
    reader.poll()
    assert sum(read_sizes) == len(appended)


def test_the_agents_files_are_only_ever_opened_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target, data = _session_copy(tmp_path)
    target.write_bytes(data)
    flags_seen: list[int] = []
    real_open = os.open

    def spying_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if str(path).startswith(str(tmp_path)):
            flags_seen.append(flags)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", spying_open)
    _report(SessionReader(target))
    assert flags_seen
    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    assert all(flags & writing == 0 for flags in flags_seen)


def test_a_truncated_file_is_read_again(tmp_path: Path) -> None:
    data = PUBLIC.read_bytes()
    target = tmp_path / "s.jsonl"
    target.write_bytes(data)
    reader = SessionReader(target)
    assert _report(reader)["api_requests"] == len(claude_responses(records(PUBLIC)))
    head = b"".join(data.splitlines(keepends=True)[:12])
    target.write_bytes(head)  # the agent dropped a retracted tail
    reader.poll()
    assert _report(reader)["api_requests"] == len(claude_responses(records(target)))


def test_a_replaced_file_is_read_again(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(PUBLIC.read_bytes())
    reader = SessionReader(target)
    first = _report(reader)
    other = tmp_path / "new.jsonl"
    replacement = (
        DATA / "public-d-kimuson-claude-code-viewer" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    )
    shutil.copy(replacement, other)
    os.replace(other, target)
    reader.poll()
    second = _report(reader)
    assert second["session_id"] != first["session_id"]
    assert second["api_requests"] == len(
        claude_responses([r for r in records(replacement) if not r.get("isSidechain")])
    )


def test_bad_lines_are_skipped_counted_and_located(tmp_path: Path) -> None:
    lines = PUBLIC.read_bytes().splitlines(keepends=True)
    huge = json.dumps({"type": "queue-operation", "content": "x" * 30_000_000}).encode() + b"\n"
    damaged = [
        *lines[:3],
        b"\xff\xfe not utf-8\n",
        lines[3],
        b'{"type": "user", \n',
        huge,
        *lines[4:],
    ]
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"".join(damaged))
    got = _report(SessionReader(target))
    assert [(s["file"], s["line"]) for s in got["skipped_lines"]] == [
        (str(target), 4),
        (str(target), 6),
    ]
    assert "UTF-8" in got["skipped_lines"][0]["reason"]
    assert "JSON" in got["skipped_lines"][1]["reason"]
    clean = _report(SessionReader(PUBLIC))
    for key in ("api_requests", "totals", "tools", "context_tokens"):
        assert got[key] == clean[key]
    assert got["last_request"] == {
        **clean["last_request"],
        "line": clean["last_request"]["line"] + 3,
    }


def test_a_compaction_without_a_request_since_sets_the_context(tmp_path: Path) -> None:
    lines = (PROJECT / f"{SESSION}.jsonl").read_bytes().splitlines(keepends=True)
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"".join(lines[:66]))  # up to the compact summary
    got = _report(SessionReader(target))
    boundary = json.loads(lines[64])
    assert boundary["subtype"] == "compact_boundary"
    assert got["context_tokens"]["source"] == "compaction"
    assert got["context_tokens"]["value"] == boundary["compactMetadata"]["postTokens"]


def test_a_tool_result_not_yet_sent_is_an_estimate_on_top(tmp_path: Path) -> None:
    lines = (PROJECT / f"{SESSION}.jsonl").read_bytes().splitlines(keepends=True)
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"".join(lines[:33]))  # ends with the big tool result
    got = _report(SessionReader(target))
    result = json.loads(lines[32])["message"]["content"][0]
    last = got["last_request"]
    context = got["context_tokens"]
    # The result's count times the factor the session's requests taught (tested on its own in
    # tests/sessions/test_tokenizer_factor.py).
    estimate = round(ENC.count(result_text(result["content"])) * context["tokenizer_factor"])
    assert context == {
        "value": last["input_tokens_total"] + last["output_tokens"] + estimate,
        "source": "calibrated",
        "reported": last["input_tokens_total"] + last["output_tokens"],
        "estimated": estimate,
        "estimate_encoding": "o200k_base",
        "tokenizer_factor": context["tokenizer_factor"],
    }


@pytest.mark.parametrize("use_watchfiles", [True, False], ids=["watchfiles", "polling"])
def test_follow_yields_a_new_state_after_an_append(tmp_path: Path, use_watchfiles: bool) -> None:
    lines = PUBLIC.read_bytes().splitlines(keepends=True)
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"".join(lines[:10]))
    with _following(target, use_watchfiles) as states:
        seen = next(states).lines_read
        _append(target, b"".join(lines[10:]))
        assert next(states).lines_read == len(lines) > seen


def _short_chat(tmp_path: Path) -> tuple[list[dict[str, Any]], Path, SessionReader]:
    """A two-message chat as a pretty-printed JSON array, read once."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "hello"},
        {
            "role": "assistant",
            "content": "hi",
            "usage": {"prompt_tokens": 10, "completion_tokens": 2},
        },
    ]
    target = tmp_path / "chat.json"
    target.write_text(json.dumps(messages, indent=1))
    reader = SessionReader(target)
    assert _report(reader)["api_requests"] == 1
    return messages, target, reader


def test_a_json_array_file_is_read_again_when_rewritten(tmp_path: Path) -> None:
    messages, target, reader = _short_chat(tmp_path)
    messages += [
        {"role": "user", "content": "again"},
        {
            "role": "assistant",
            "content": "ok",
            "usage": {"prompt_tokens": 20, "completion_tokens": 3},
        },
    ]
    target.write_text(json.dumps(messages, indent=1))
    reader.poll()
    got = _report(reader)
    assert got["api_requests"] == 2
    assert got["totals"]["input"] == 30


def test_a_file_rewritten_in_place_and_grown_is_read_again(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"".join(PUBLIC.read_bytes().splitlines(keepends=True)[:5]))
    reader = SessionReader(target)
    first = _report(reader)
    other = (
        DATA / "public-d-kimuson-claude-code-viewer" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    )
    with target.open("r+b") as handle:  # same inode, longer content: only the bytes tell
        handle.write(other.read_bytes())
    reader.poll()
    second = _report(reader)
    assert second["session_id"] != first["session_id"] == PUBLIC.stem
    assert second["session_id"] == other.stem


def test_reading_a_big_file_in_slices_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxtop.engine.agents import session_reader as reader_module

    target, data = _session_copy(tmp_path)
    target.write_bytes(data)
    whole = _report(SessionReader(target))
    monkeypatch.setattr(reader_module, "BATCH_BYTES", 5000)
    assert _report(SessionReader(target)) == whole


@pytest.mark.parametrize("use_watchfiles", [True, False], ids=["watchfiles", "polling"])
def test_a_subagent_that_starts_while_following_shows_up(
    tmp_path: Path, use_watchfiles: bool
) -> None:
    target, data = _session_copy(tmp_path)
    shutil.rmtree(tmp_path / SESSION)  # no sub-agent yet
    target.write_bytes(data)
    with _following(target, use_watchfiles) as states:
        assert next(states).subagents == {}
        shutil.copytree(PROJECT / SESSION, tmp_path / SESSION)
        state = next(states)
        while not state.subagents:
            state = next(states)
        assert list(state.subagents) == ["a0ed8cda787e7130f"]


def test_unreadable_or_foreign_files_are_one_line_errors(tmp_path: Path) -> None:
    foreign = tmp_path / "notes.txt"
    foreign.write_text("just some text\nnot a log\n")
    for path, message in (
        (tmp_path, "cannot read"),
        (tmp_path / "missing.jsonl", "no such file"),
        (foreign, "not a session log"),
    ):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            assert main(["report", str(path), "--json"]) == 2
        assert err.getvalue().count("\n") == 1
        assert str(path) in err.getvalue()
        assert message in err.getvalue()


@pytest.mark.parametrize("path", [PROJECT / f"{SESSION}.jsonl", PUBLIC], ids=["2.1", "1.0"])
def test_a_quick_look_at_the_end_gets_the_latest_figures(path: Path) -> None:
    full = _report(SessionReader(path))
    quick_reader = SessionReader(path, tail_bytes=path.stat().st_size // 3)
    quick = _report(quick_reader)
    assert quick_reader.partial
    for key in ("model", "session_id", "agent_version"):
        assert quick[key] == full[key]
    context, quick_context = full["context_tokens"], quick["context_tokens"]
    if quick["api_requests"] > LEARNT_OVER:
        assert quick_context == context  # the quick look holds what the factor is learnt from
    else:
        # A file too short for that: the same figures but for the estimate's factor, learnt
        # from fewer requests.
        assert quick_context["reported"] == context["reported"]
        assert quick_context["source"] == context["source"]
        same_count = context["estimated"] / context["tokenizer_factor"]
        assert abs(quick_context["estimated"] / quick_context["tokenizer_factor"] - same_count) < 1
    # Line numbers count from the cut; everything else about the last request is the same.
    assert quick["last_request"].pop("line") < full["last_request"].pop("line")
    assert quick["last_request"] == full["last_request"]
    assert quick["api_requests"] < full["api_requests"]


def test_a_json_document_caught_mid_rewrite_keeps_the_last_good_state(tmp_path: Path) -> None:
    messages, target, reader = _short_chat(tmp_path)
    target.write_text(json.dumps(messages, indent=1)[:-20])  # half-written
    assert not reader.poll()
    assert _report(reader)["api_requests"] == 1
    messages.append({"role": "user", "content": "more"})
    target.write_text(json.dumps(messages, indent=1))
    assert reader.poll()
    assert _report(reader)["lines_read"] == 3


@pytest.mark.parametrize("use_watchfiles", [True, False], ids=["watchfiles", "polling"])
def test_follow_waits_for_a_session_file_that_is_not_written_yet(
    tmp_path: Path, use_watchfiles: bool
) -> None:
    target = tmp_path / "s.jsonl"
    with _following(target, use_watchfiles) as states:
        threading.Timer(0.3, lambda: target.write_bytes(PUBLIC.read_bytes())).start()
        first = next(states)
        assert first.session_id == PUBLIC.stem


SAMPLE_CHAT = Path(__file__).resolve().parents[2] / "sample_sessions" / "openai-messages"
EVERY_JSONL = [
    *sorted(
        path
        for path in (Path(__file__).parent / "data").rglob("*.jsonl")
        if not path.name.startswith("agent-")
    ),
    SAMPLE_CHAT / "agent-loop.jsonl",
]


@pytest.mark.parametrize("source", EVERY_JSONL, ids=lambda path: path.name[:8])
def test_any_file_written_in_random_pieces_reads_like_the_whole(
    tmp_path: Path, source: Path
) -> None:
    data = source.read_bytes()
    target = tmp_path / source.name
    target.write_bytes(b"")
    reader = SessionReader(target)
    rng = random.Random(len(data))
    position = 0
    while position < len(data):
        step = rng.randint(1, max(2, len(data) // 12))
        _append(target, data[position : position + step])
        position += step
        reader.poll()
        if reader.adapter is not None:
            build_report(reader.adapter)
    assert _report(reader) == _report(SessionReader(target))

"""A last line without its newline (a finished file copied by another tool often ends so): it
counts when the file is read as it stands, and in a live tail once the file has been quiet for
``QUIET_LINE_SECONDS``; its newline coming later is no second line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sessions_expect import claude_responses, records
from test_sessions_tail import EVERY_JSONL

from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.sessions.report_json import build_report
from ctxtop.engine.sessions.tail import QUIET_LINE_SECONDS

DATA = Path(__file__).parent / "data" / "real"
CLAUDE = (
    DATA
    / "claude-code"
    / "generated-cli-2.1.330"
    / "projects"
    / "-home-dev-demo-project"
    / "b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl"
)


class Clock:
    """A clock the test moves by hand (the reader measures a line's quiet time on it)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _report(reader: SessionReader) -> dict[str, Any]:
    read_all(reader)
    assert reader.adapter is not None
    report = build_report(reader.adapter)
    for name in ("file", "bytes_read"):  # the one byte of the newline
        report.pop(name)
    return report


def _report_of(tmp_path: Path, data: bytes) -> dict[str, Any]:
    """The report of ``data`` as the file ``s.jsonl`` (one name: reports name their file)."""
    target = tmp_path / "s.jsonl"
    target.write_bytes(data)
    return _report(SessionReader(target))


def _lines(source: Path) -> list[bytes]:
    return source.read_bytes().splitlines(keepends=True)


def _last_line_that_counts(source: Path, tmp_path: Path) -> int:
    """How many lines of ``source`` to keep so that the last kept line changes the report
    (a response, a message, a compaction): dropping that line would be seen."""
    lines = _lines(source)
    keep = len(lines)
    before = _report_of(tmp_path, b"".join(lines[:keep]))
    while keep > 1:
        shorter = _report_of(tmp_path, b"".join(lines[: keep - 1]))
        if shorter != before:
            return keep
        keep, before = keep - 1, shorter
    return keep


@pytest.mark.parametrize("source", EVERY_JSONL, ids=lambda path: path.name[:8])
def test_a_file_without_its_last_newline_reads_like_the_file_with_it(
    tmp_path: Path, source: Path
) -> None:
    keep = _last_line_that_counts(source, tmp_path)
    whole = b"".join(_lines(source)[:keep])
    assert whole.endswith(b"\n")
    with_newline = _report_of(tmp_path, whole)
    without = _report_of(tmp_path, whole.rstrip(b"\r\n"))
    assert without == with_newline


def _claude_up_to_last_response() -> bytes:
    """The 2.1.330 session up to its last assistant line, without the newline after it."""
    lines = _lines(CLAUDE)
    last = max(i for i, line in enumerate(lines) if b'"type":"assistant"' in line)
    return b"".join(lines[: last + 1]).rstrip(b"\n")


def test_a_cold_read_counts_the_last_response_and_its_output(tmp_path: Path) -> None:
    data = _claude_up_to_last_response()
    target = tmp_path / "s.jsonl"
    target.write_bytes(data)
    rows = [row for row in records(target) if not row.get("isSidechain")]
    expected = claude_responses(rows)  # by message id, from the file itself
    state = read_all(SessionReader(target))
    assert state.api_requests == len(expected)
    assert state.totals.output_tokens == sum(
        usage.get("output_tokens", 0) for usage in expected.values()
    )
    assert state.skipped == []


def test_a_live_tail_takes_the_line_once_quiet_and_never_twice(tmp_path: Path) -> None:
    data = _claude_up_to_last_response()
    head, _, last = data.rpartition(b"\n")
    target = tmp_path / "s.jsonl"
    target.write_bytes(head + b"\n")
    clock = Clock()
    reader = SessionReader(target, clock=clock)
    state = read_all(reader)
    before = state.api_requests
    with target.open("ab") as handle:
        handle.write(last)
    reader.poll()
    assert state.api_requests == before  # just written: perhaps not finished
    clock.now += QUIET_LINE_SECONDS / 2
    reader.poll()
    assert state.api_requests == before
    clock.now += QUIET_LINE_SECONDS / 2
    assert reader.poll()
    assert state.api_requests == before + 1
    lines = state.lines_read
    with target.open("ab") as handle:
        handle.write(b"\n")  # the newline comes after all
    reader.poll()
    assert (state.api_requests, state.lines_read, state.skipped) == (before + 1, lines, [])
    # and the rest of the session follows as if the line had never waited
    rest = CLAUDE.read_bytes()[len(data) + 1 :]
    with target.open("ab") as handle:
        handle.write(rest)
    reader.poll()
    assert _report(reader) == _report(SessionReader(target))


def test_a_line_cut_short_is_never_taken_however_quiet(tmp_path: Path) -> None:
    data = _claude_up_to_last_response()
    head, _, last = data.rpartition(b"\n")
    target = tmp_path / "s.jsonl"
    target.write_bytes(head + b"\n" + last[:-1])  # the last line without its closing brace
    clock = Clock()
    reader = SessionReader(target, clock=clock)
    state = read_all(reader)
    clock.now += 100 * QUIET_LINE_SECONDS
    reader.poll()
    assert state.skipped == []
    before = state.api_requests
    with target.open("ab") as handle:
        handle.write(last[-1:] + b"\n")
    reader.poll()
    assert state.api_requests == before + 1
    assert state.skipped == []


def test_more_written_after_a_taken_line_stays_on_that_line(tmp_path: Path) -> None:
    """Two records written with no newline between them: the second is read too, under the
    first one's line number (it is on that line of the file)."""
    lines = _lines(CLAUDE)
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"".join(lines[:-2]) + lines[-2].rstrip(b"\n"))
    clock = Clock()
    reader = SessionReader(target, clock=clock)
    read_all(reader)
    with target.open("ab") as handle:
        handle.write(lines[-1])
    reader.poll()
    joined = _report(reader)
    whole = _report_of(tmp_path, b"".join(lines))
    assert joined["api_requests"] == whole["api_requests"]
    assert joined["totals"] == whole["totals"]
    assert joined["lines_read"] == whole["lines_read"] - 1


def test_a_held_line_that_is_not_whole_is_decoded_once_per_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big line cut short is not decoded again on every poll while it stays as it is."""
    from ctxtop.engine.sessions import tail

    decoded: list[int] = []

    def counting(raw: bytes) -> bool:
        decoded.append(len(raw))
        return original(raw)

    original = tail.whole_json
    monkeypatch.setattr(tail, "whole_json", counting)
    data = _claude_up_to_last_response()
    head, _, last = data.rpartition(b"\n")
    target = tmp_path / "s.jsonl"
    target.write_bytes(head + b"\n" + last[:-1])
    clock = Clock()
    reader = SessionReader(target, clock=clock)
    read_all(reader)
    for _ in range(5):
        clock.now += QUIET_LINE_SECONDS
        reader.poll()
    assert decoded == [len(last) - 1]
    with target.open("ab") as handle:
        handle.write(last[-1:])  # now whole, still without its newline
    reader.poll()  # it grew just now
    clock.now += QUIET_LINE_SECONDS
    reader.poll()
    assert decoded == [len(last) - 1, len(last)]

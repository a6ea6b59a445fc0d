"""How often an edit or compaction preview, and "Apply live", read and decode the session: the
session's lines are decoded once for the fork writer and the compaction source together, a later
preview decodes nothing of the session again, and "Apply live" starts from the panel's session
instead of reading the file again."""

from __future__ import annotations

import datetime
import hashlib
import random
import shutil
import sys
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FunctionType
from typing import Any

import pytest
from conftest import Watch

import ctxtop.engine.compaction.source as compaction_source
import ctxtop.engine.sessions.json_lines as json_lines
from ctxtop.engine.agents.session_reader import SessionReader, read_session_data
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks import transaction
from ctxtop.engine.forks.compact import preview_compact
from ctxtop.engine.forks.edit import preview_edit
from ctxtop.engine.forks.transaction import (
    COMPACTING,
    EDITING,
    Details,
    Loaded,
    Preview,
    load,
    read_session_bytes,
    unwritten,
)
from ctxtop.engine.live.apply_plan import apply_compact, apply_edit
from ctxtop.engine.sessions.adapter import DETECT_RECORDS

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = {  # a session of each agent ctxtop writes forks for
    "claude-code": ROOT / "tests/sessions/data/real/claude-code/public-d-kimuson-claude-code-viewer"
    "/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
    "codex": ROOT / "sample_sessions/codex/sessions/2026/11/28"
    "/rollout-2026-11-28T00-03-13-01a21f76-8df4-73c2-b65e-f6195480b3cf.jsonl",
    "openai-messages": ROOT / "sample_sessions/openai-messages/agent-loop.jsonl",
}


class Parses:
    """Whole reads of the session's bytes: by the session reader and by the line decoder that
    load, the fork writer and the compaction source use (``session_records``, ``line_records``),
    told apart from reads of a fork; and each line the reader or that decoder decoded
    (``decode_line``), and the reader's lean pass over the history (``plan_history``)."""

    def __init__(self, session: bytes) -> None:
        self.session = session
        self.counts: Counter[str] = Counter()
        self.lines: Counter[bytes] = Counter()

    def of(self, data: bytes | None) -> str:
        """Whose bytes: None is a read of the file itself (the session's)."""
        return "session" if data is None or data == self.session else "fork"

    def session_lines(self) -> Counter[bytes]:
        """The session's lines, each as often as it occurs."""
        return Counter(line for line in self.session.split(b"\n") if line)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[Parses]:
    counter = Parses(b"")
    real_init = SessionReader.__init__
    real_plan = SessionReader._plan_history

    def init(self: SessionReader, path: Any, *args: Any, **kwargs: Any) -> None:
        counter.counts["reader " + counter.of(kwargs.get("data"))] += 1
        real_init(self, path, *args, **kwargs)

    def plan(self: SessionReader, adapter: Any) -> None:
        counter.counts["lean history"] += 1
        real_plan(self, adapter)

    def counted(real: Callable[..., Any]) -> Callable[..., Any]:
        def decode(*args: Any) -> Any:
            counter.counts["decode " + counter.of(args[-1])] += 1
            return real(*args)

        return decode

    def line(raw: bytes) -> tuple[Any, str | None]:
        counter.lines[raw] += 1
        return real_line(raw)

    monkeypatch.setattr(SessionReader, "__init__", init)
    monkeypatch.setattr(SessionReader, "_plan_history", plan)
    real_line = json_lines.decode_line
    patched = {json_lines.decode_line: line}
    for real in (json_lines.line_records, json_lines.session_records):  # (jsonl_records' too)
        patched[real] = counted(real)
    for module in list(sys.modules.values()):  # every module that imported a decoder
        for name, value in list(vars(module).items()) if module is not None else ():
            if isinstance(value, FunctionType) and value in patched:
                monkeypatch.setattr(module, name, patched[value])
    yield counter


def _copy(agent: str, tmp_path: Path, parses: Parses) -> Path:
    source = SESSIONS[agent]
    copied = tmp_path / source.name
    shutil.copyfile(source, copied)
    parses.session = copied.read_bytes()
    return copied


def _opened(watch: Watch, path: Path) -> int:
    return sum(1 for name in watch.opened if name == str(path))


DECODED_ONCE = sorted(SESSIONS)


@pytest.mark.parametrize("agent", DECODED_ONCE)
def test_edit_previews_decode_the_session_once(
    agent: str, tmp_path: Path, parses: Parses, watch: Watch
) -> None:
    """Two previews (the panel's first and a changed policy): the reader reads the session
    once and the fork writer decodes its lines once, for its scan and both renders (each fork
    is read back: that is the fork's own read)."""
    path = _copy(agent, tmp_path, parses)
    with watch.active():
        loaded = load(path, EDITING)
        first = preview_edit(loaded, Policy(keep_turns=1))
        second = preview_edit(loaded, Policy(keep_turns=0))
    assert second.tokens_after <= first.tokens_after <= first.tokens_before
    assert parses.counts["reader session"] == 1
    assert parses.counts["decode session"] == 1  # before: 3 (the scan, each render), 5 (OpenAI)
    assert parses.counts["reader fork"] == 2
    assert parses.counts["decode fork"] == 0  # before: 2 for Claude Code (its usage marked)
    assert _opened(watch, path) == 2  # the agent told from the head, then the bytes


@pytest.mark.parametrize("agent", DECODED_ONCE)
def test_compaction_previews_decode_the_session_once(
    agent: str, tmp_path: Path, parses: Parses, watch: Watch
) -> None:
    path = _copy(agent, tmp_path, parses)
    with watch.active():
        loaded = load(path, COMPACTING)
        preview_compact(loaded, keep_rounds=1)
        preview_compact(loaded, keep_rounds=0)
    assert parses.counts["reader session"] == 1
    # At most once (before: 2 for Claude Code, 16 for Codex); a Codex fork was also rendered to
    # bytes and decoded again to append its compaction.
    assert parses.counts["decode session"] <= 1
    assert parses.counts["decode fork"] == 0
    assert _opened(watch, path) == 2


@pytest.mark.parametrize("agent", ["claude-code", "openai-messages"])
def test_apply_live_starts_from_the_panels_session(
    agent: str, tmp_path: Path, parses: Parses, watch: Watch
) -> None:
    """The edit panel's "Apply live" plans from the session its previews read: nothing is
    read or decoded again (before: the file opened twice, read and decoded whole again)."""
    path = _copy(agent, tmp_path, parses)
    loaded = load(path, EDITING)
    shown = preview_edit(loaded, Policy(keep_turns=0))
    parses.counts.clear()
    with watch.active():
        plan, outcome, _ = apply_edit(path, Policy(keep_turns=0), "s1", loaded)
    assert _opened(watch, path) == 0
    assert parses.counts["reader session"] == parses.counts["decode session"] == 0
    assert plan.source_sha256 == loaded.sha256
    assert outcome.preview.tokens_after == shown.tokens_after


def test_edit_and_compact_live_read_the_session_once(
    tmp_path: Path, parses: Parses, watch: Watch
) -> None:
    """``ctxtop edit --live`` and ``ctxtop compact --live``: the session id the plan is for
    comes from the session read for the plan (before: the session was read twice)."""
    path = _copy("claude-code", tmp_path, parses)
    edited, _, _ = apply_edit(path, Policy(keep_turns=0))
    assert parses.counts["reader session"] == 1
    compacted, _, _ = apply_compact(path, keep_rounds=1)
    assert parses.counts["reader session"] == 2
    assert edited.session_id == compacted.session_id == path.stem


@pytest.mark.parametrize("agent", DECODED_ONCE)
def test_a_preview_load_decodes_each_line_once(
    agent: str, tmp_path: Path, parses: Parses, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``load`` decodes each line of the session once, and the session reader and the fork
    writer both take those records: no lean pass over the history, and the previews decode
    nothing of the session again (before: each line twice, by the reader, the history before
    the last compaction in its lean pass, and by the writer on the first preview)."""
    path = _copy(agent, tmp_path, parses)
    head: Counter[bytes] = Counter()
    real_refuse = transaction.refuse_unsupported

    def refuse(source: Path, doing: str, agent: Any) -> None:  # the agent told from the head
        lines = parses.lines.copy()
        real_refuse(source, doing, agent)
        head.update(parses.lines - lines)
        parses.lines.subtract(parses.lines - lines)

    monkeypatch.setattr(transaction, "refuse_unsupported", refuse)
    loaded = load(path, EDITING)
    assert +parses.lines == parses.session_lines()  # each line once: reader and writer alike
    assert sum(head.values()) <= DETECT_RECORDS
    assert parses.counts["decode session"] == 1 and parses.counts["lean history"] == 0
    preview_edit(loaded, Policy(keep_turns=0))
    preview_compact(load(path, COMPACTING), keep_rounds=1)
    assert parses.counts["decode session"] == 2  # the compaction's own load


# Sessions of every agent ctxtop forks, compacted ones and a JSON document among them.
SAME_PREVIEW = [
    SESSIONS["claude-code"],
    ROOT / "tests/data/one_turn/codex"
    "/rollout-2026-11-25T06-15-28-01a21158-4b37-7df3-a955-6d9dc9b742b0.jsonl",
    SESSIONS["openai-messages"],
    ROOT / "sample_sessions/claude-code/projects/-home-dev-demo-project"
    "/b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl",
    ROOT / "sample_sessions/pi/sessions/--home-dev-pi-projects-calc-pi--"
    "/2026-11-29T01-35-09-145Z_01a224f1-1558-7141-8f66-577d33263d8e.jsonl",
    ROOT / "sample_sessions/qwen-code/projects/-home-dev-qwen-projects-calc-qwen/chats"
    "/443ea2f2-c530-473d-b86e-35a04a280ca7.jsonl",
    ROOT / "sample_sessions/openai-messages/demo-chat.json",
]


# Every result and long input cleared, however small: each session's fork changes something.
CLEAR_ALL = Policy(keep_tool_uses=0, min_result_tokens=0, exclude=(), clear_inputs=True)


def read_by_the_reader(path: Path) -> Loaded:
    """The session as the reader reads it on its own (its lean history, its own decoding) and
    a writer that decodes the lines itself: what ``load`` did before the lines were shared."""
    data = read_session_bytes(path)
    loaded = Loaded(path, data, hashlib.sha256(data).hexdigest(), read_session_data(path, data))
    loaded.count_context()
    return loaded


def outcome(preview: Preview[Details]) -> tuple[dict[str, Any], bytes]:
    """All a preview shows and would write."""
    return unwritten(preview, dry_run=True).as_json(), preview.fork_data


def same_forks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The next fork gets the same new ids as the one before and the same compaction time (a
    fresh UUID and now, otherwise)."""
    ids = random.Random(28)
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=ids.getrandbits(128), version=4))
    monkeypatch.setattr(compaction_source, "datetime", FrozenTime)


class FrozenTime(datetime.datetime):
    @classmethod
    def now(cls, tz: datetime.tzinfo | None = None) -> FrozenTime:
        return cls(2026, 11, 29, 4, tzinfo=tz)


@pytest.mark.parametrize("source", SAME_PREVIEW, ids=lambda path: path.name[-20:])
def test_previews_from_the_shared_records_are_the_readers_own(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The edit and compaction previews of a session loaded with its lines decoded once are
    those of the session as the reader reads it on its own, figure for figure and byte for
    byte."""
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    changed: list[bool] = []
    for doing, preview in (
        (EDITING, lambda loaded: preview_edit(loaded, CLEAR_ALL)),
        (COMPACTING, lambda loaded: preview_compact(loaded, keep_rounds=1)),
    ):
        loaded, own = load(path, doing), read_by_the_reader(path)
        same_forks(monkeypatch)
        shared = outcome(preview(loaded))
        same_forks(monkeypatch)
        assert shared == outcome(preview(own))
        changed.append(shared[0]["tokens_after"] != shared[0]["tokens_before"])
    assert any(changed)  # a fork that changes something


# Lines a session may hold that are no record: not UTF-8, not JSON, and JSON that only the
# stdlib reads (NaN), of a type no reader knows.
ODD_LINES = [
    b'{"type":"progress","text":"cut \xff\xfe short"}',
    b'{"type":"progress", oops',
    b'{"type":"ctxtop-test","value":NaN}',
]


def test_odd_lines_are_kept_byte_for_byte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line that is not JSON (or not UTF-8) is kept in the fork byte for byte, and reported
    by the reader as it reports it reading the file; a line only the stdlib decodes is read."""
    lines = SESSIONS["claude-code"].read_bytes().splitlines()
    path = tmp_path / SESSIONS["claude-code"].name
    path.write_bytes(b"\n".join([*lines[:3], *ODD_LINES, *lines[3:]]) + b"\n")
    loaded = load(path, EDITING)
    assert loaded.records is not None
    assert loaded.records[3:5] == ODD_LINES[:2]  # kept as bytes
    assert loaded.records[5]["type"] == "ctxtop-test"
    assert loaded.state is not None
    assert loaded.state.skipped == read_by_the_reader(path).state.skipped  # type: ignore[union-attr]
    assert [line.line for line in loaded.state.skipped] == [4, 5]
    same_forks(monkeypatch)
    fork = preview_edit(loaded, CLEAR_ALL).fork_data
    assert all(b"\n" + line + b"\n" in fork for line in ODD_LINES)
    same_forks(monkeypatch)
    assert fork == preview_edit(read_by_the_reader(path), CLEAR_ALL).fork_data

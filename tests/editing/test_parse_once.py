"""How often an edit or compaction preview, and "Apply live", read and decode the session: the
session's lines are decoded once for the fork writer and the compaction source together, a later
preview decodes nothing of the session again, and "Apply live" starts from the panel's session
instead of reading the file again."""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Watch

import ctxtop.engine.editing.writer as writer_module
from ctxtop.engine.agents.session_reader import SessionReader
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks.compact import preview_compact
from ctxtop.engine.forks.edit import preview_edit
from ctxtop.engine.forks.transaction import COMPACTING, EDITING, load
from ctxtop.engine.live.apply_plan import apply_compact, apply_edit

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = {  # a session of each agent ctxtop writes forks for
    "claude-code": ROOT / "tests/sessions/data/real/claude-code/public-d-kimuson-claude-code-viewer"
    "/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
    "codex": ROOT / "sample_sessions/codex/sessions/2026/11/28"
    "/rollout-2026-11-28T00-03-13-01a21f76-8df4-73c2-b65e-f6195480b3cf.jsonl",
    "openai-messages": ROOT / "sample_sessions/openai-messages/agent-loop.jsonl",
}


class Parses:
    """Whole reads of the session's bytes: by the session reader and by the fork writer's and
    compaction source's line decoder (``jsonl_records``), told apart from reads of a fork."""

    def __init__(self, session: bytes) -> None:
        self.session = session
        self.counts: Counter[str] = Counter()

    def of(self, data: bytes | None) -> str:
        """Whose bytes: None is a read of the file itself (the session's)."""
        return "session" if data is None or data == self.session else "fork"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[Parses]:
    counter = Parses(b"")
    real_init = SessionReader.__init__
    real_records = writer_module.jsonl_records

    def init(self: SessionReader, path: Any, *args: Any, **kwargs: Any) -> None:
        counter.counts["reader " + counter.of(kwargs.get("data"))] += 1
        real_init(self, path, *args, **kwargs)

    def records(path: Path, data: bytes) -> list[Any]:
        counter.counts["decode " + counter.of(data)] += 1
        return real_records(path, data)

    monkeypatch.setattr(SessionReader, "__init__", init)
    for module in list(sys.modules.values()):  # every module that imported the decoder
        if getattr(module, "jsonl_records", None) is real_records:
            monkeypatch.setattr(module, "jsonl_records", records)
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

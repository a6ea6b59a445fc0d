"""The fork transaction shared by ``ctxtop edit`` and ``ctxtop compact``: the preview is the
fork written (its figures and its bytes), a fork that does not read back is never written, and a
preview works in memory: the session's file is not opened again and its texts are not counted
again."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Watch

from ctxtop.engine.agents.openai_messages.writer import OpenAIMessagesWriter
from ctxtop.engine.agents.session_reader import read_session, read_session_data
from ctxtop.engine.editing import action_log
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.errors import InputError
from ctxtop.engine.forks.compact import preview_compact
from ctxtop.engine.forks.edit import edit_session, preview_edit, write_edit
from ctxtop.engine.forks.transaction import COMPACTING, EDITING, Preview, commit, load, unwritten

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions/openai-messages/agent-loop.jsonl"
# What differs between a preview and the outcome of writing it: where it went and its log id.
WRITTEN_KEYS = ("fork", "session_id", "resume_command", "action_id", "dry_run", "offloaded")


def _session(tmp_path: Path) -> Path:
    source = tmp_path / SAMPLE.name
    shutil.copyfile(SAMPLE, source)
    return source


def _figures(outcome: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in outcome.items() if key not in WRITTEN_KEYS}


def _previews(source: Path) -> list[tuple[Preview, Callable[[Preview], Any]]]:
    return [
        (preview_edit(load(source, EDITING), Policy(keep_turns=0)), write_edit),
        (preview_compact(load(source, COMPACTING), keep_rounds=1), commit),
    ]


def test_the_fork_written_is_the_preview(tmp_path: Path) -> None:
    source = _session(tmp_path)
    for preview, write in _previews(source):
        shown = unwritten(preview, dry_run=True).as_json()
        assert shown["fork"] is None and not preview.fork_path.exists()
        outcome = write(preview)
        assert outcome.fork == preview.fork_path and outcome.fork.read_bytes() == preview.fork_data
        written = outcome.as_json()
        assert _figures(written) == _figures(shown)
        assert written["session_id"] == preview.session_id and written["action_id"]
        assert [entry["fork"] for entry in action_log.live_forks()][-1] == str(outcome.fork)
    assert source.read_bytes() == SAMPLE.read_bytes()


def test_a_fork_that_does_not_read_back_is_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _session(tmp_path)
    before = sorted(tmp_path.iterdir())

    def broken(self: OpenAIMessagesWriter, *args: Any) -> bytes:
        return b"this is not a session log\n"

    monkeypatch.setattr(OpenAIMessagesWriter, "render", broken)
    with pytest.raises(InputError, match="the edit would not read back") as raised:
        edit_session(source, Policy(keep_turns=0))
    assert str(raised.value).startswith(f"{source}: ")
    assert sorted(tmp_path.iterdir()) == before
    assert not action_log.log_path().exists() or not action_log.live_forks()


def test_a_preview_reads_nothing_from_disk_and_counts_only_new_text(
    tmp_path: Path, watch: Watch
) -> None:
    source = _session(tmp_path)
    edits, compactions = load(source, EDITING), load(source, COMPACTING)
    preview_edit(edits, Policy(keep_turns=1))  # the first preview after loading
    preview_compact(compactions, keep_rounds=2)
    assert edits.state is not None
    texts = {block.content() for message in edits.state.context for block in message.blocks}
    with watch.active():
        edit = preview_edit(edits, Policy(keep_turns=0))
        compact = preview_compact(compactions, keep_rounds=1)
    assert watch.opened == []
    assert edit.tokens_after < edit.tokens_before
    # Only what the fork changed is counted (placeholders, the summary): no text of the session.
    assert unwritten(compact, dry_run=True).as_json()["summary"] in watch.counted
    assert not texts.intersection(watch.counted)


SESSIONS = sorted(
    path
    for path in (SAMPLE.parents[1]).rglob("*.json*")
    if path.suffix in (".json", ".jsonl")
    and not path.name.endswith(".meta.json")
    and path.name != "workspace.json"  # VS Code's map of a workspace to its folder
)


@pytest.mark.parametrize("path", SESSIONS, ids=lambda path: path.name)
def test_a_session_read_from_its_bytes_is_the_session_read_from_its_file(path: Path) -> None:
    """The reader's bytes entry point (what the transaction reads the session and its fork
    with) gives what reading the file gives, without a file: every sample session, line logs
    and JSON documents."""
    from_file = read_session(path)
    from_bytes = read_session_data(path, path.read_bytes())
    assert from_bytes.agent == from_file.agent and from_bytes.model == from_file.model
    assert from_bytes.bytes_read == from_file.bytes_read > 0
    shape = [[(b.kind, b.content()) for b in m.blocks] for m in from_file.context]
    assert [[(b.kind, b.content()) for b in m.blocks] for m in from_bytes.context] == shape
    assert [s.reason for s in from_bytes.skipped] == [s.reason for s in from_file.skipped]

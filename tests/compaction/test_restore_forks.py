"""``ctxtop restore``: forks of real sessions at their compaction, as the agent will read them:
the history up to the boundary as it was, or the summary with dropped items re-added in one
marked message; the original untouched, the fork logged and removed by ``ctxtop undo``."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from compaction_logs import (
    AUTOCOMPACT_2_1_332,
    CLAUDE_2_1_332,
    CLAUDE_DEMO,
    CODEX,
    write_session,
)

from ctxtop.engine.agents.session_reader import read_session, read_session_data
from ctxtop.engine.cli.main import main
from ctxtop.engine.editing import action_log
from ctxtop.engine.forks.compactions import inspect_file
from ctxtop.engine.forks.restore import HEADER, restore_session

GIT_LOG = "Bash ls -la && git status --short && git log --oneline -3"


def copied(source: Path, tmp_path: Path) -> Path:
    target = tmp_path / source.name
    shutil.copyfile(source, target)
    return target


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def context_ids(path: Path, data: bytes | None = None) -> list[str]:
    state = read_session(path) if data is None else read_session_data(path, data)
    return [message.id for message in state.context]


def test_claude_code_before_the_compaction_is_the_history_as_it_was(tmp_path: Path) -> None:
    source = copied(CLAUDE_2_1_332, tmp_path)
    original = digest(source)
    lines = source.read_bytes().splitlines(keepends=True)
    before = b"".join(lines[:120])  # the compact_boundary is line 121
    outcome = restore_session(source, 1).as_json()
    fork = Path(outcome["fork"])
    assert (outcome["restore"], outcome["compaction"], outcome["compaction_line"]) == (
        "before",
        1,
        121,
    )
    assert fork.parent == source.parent and fork.name == f"{outcome['session_id']}.jsonl"
    assert context_ids(fork) == context_ids(source, before)
    restored = read_session(fork)
    assert not restored.compactions
    assert all(
        json.loads(line)["sessionId"] == outcome["session_id"]
        for line in fork.read_text(encoding="utf-8").splitlines()
        if '"sessionId"' in line
    )
    assert outcome["resume_command"].endswith(f"claude --resume {outcome['session_id']}")
    assert digest(source) == original
    # Logged: undo removes it.
    assert [a["kind"] for a in action_log.read_actions()] == ["restore"]
    assert main(["undo"]) == 0
    assert not fork.exists() and digest(source) == original


def test_claude_code_keeps_the_summary_and_re_adds_a_dropped_result(tmp_path: Path) -> None:
    source = copied(CLAUDE_2_1_332, tmp_path)
    original = digest(source)
    outcome = restore_session(source, 1, ["T3"]).as_json()
    fork = Path(outcome["fork"])
    assert (outcome["restore"], outcome["with"]) == ("summary", ["T3"])
    state = read_session(fork)
    summary = [message.kind for message in state.context].index("compact_summary")
    [added] = [m for m in state.context if m.blocks and m.blocks[0].content().startswith(HEADER)]
    text = added.blocks[0].content()
    assert added.role == "user" and state.context.index(added) > summary
    assert GIT_LOG in text and "drwxr-xr-x" in text  # the listing's own lines
    assert "line 121" in text
    # The rest of the context is the session's, in its order.
    assert [i for i in context_ids(fork) if i != added.id] == context_ids(source)
    assert outcome["tokens_after"] > outcome["tokens_before"]
    assert digest(source) == original


def test_the_forgotten_instructions_go_back_after_the_summary(tmp_path: Path) -> None:
    source = copied(CLAUDE_DEMO, tmp_path)
    outcome = restore_session(source, 1, ["forgotten"]).as_json()
    assert outcome["with"] == ["U1"]
    state = read_session(Path(outcome["fork"]))
    [text] = [m.blocks[0].content() for m in state.context if m.role == "user" and m.blocks
              and m.blocks[0].content().startswith(HEADER)]  # fmt: skip
    assert "## User message U1" in text and "STEP_BIGREAD STEP_AGENT" in text


def test_mid_turn_auto_compaction_both_kinds(tmp_path: Path) -> None:
    """Claude Code 2.1.332 auto-compacted between two reads of one turn (boundary at line 37,
    its summary at line 40 after two attachments)."""
    source = copied(AUTOCOMPACT_2_1_332, tmp_path)
    lines = source.read_bytes().splitlines(keepends=True)
    before = restore_session(source, 1).as_json()
    assert context_ids(Path(before["fork"])) == context_ids(source, b"".join(lines[:36]))
    readded = restore_session(source, 1, ["T1"]).as_json()
    context = read_session(Path(readded["fork"])).context
    said = [" ".join(b.content() for b in m.blocks) for m in context]
    summary = [m.kind for m in context].index("compact_summary")
    [added] = [i for i, text in enumerate(said) if text.startswith(HEADER)]
    # After the summary and the round Claude Code kept with it (the second read, lines 31-32).
    assert added > summary and [m.line for m in context[summary + 1 : added]] == [31, 32]
    assert "processed job 1 in 37 ms" in said[added]  # the first read, summarised away
    assert not any("processed job 1 in 37 ms" in text for text in said[:added])


def test_a_microcompaction_s_cleared_result_goes_back(tmp_path: Path) -> None:
    """Nothing summarised: the message goes right after the line that cleared the result."""
    written = write_session(tmp_path / "projects")
    inspection = inspect_file(written.path).compactions[0]
    [first] = [e for e in inspection.of("tool result") if e.text == written.cleared["toolu_01"]]
    outcome = restore_session(written.path, 1, [first.id]).as_json()
    context = read_session(Path(outcome["fork"])).context
    said = [" ".join(b.content() for b in m.blocks) for m in context]
    [added] = [i for i, text in enumerate(said) if text.startswith(HEADER)]
    assert written.cleared["toolu_01"] in said[added]
    assert [m.line for m in context[added - 1 : added + 2]] == [10, 12, 13]  # boundary: 11
    before = restore_session(written.path, 1).as_json()
    assert not read_session(Path(before["fork"])).microcompactions


def test_codex_before_and_with(tmp_path: Path) -> None:
    source = copied(CODEX, tmp_path)
    original = digest(source)
    before = restore_session(source, 1).as_json()
    fork = Path(before["fork"])
    records = [json.loads(line) for line in fork.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 84 and not [r for r in records if r["type"] == "compacted"]
    assert records[0]["payload"]["id"] == before["session_id"]
    assert before["resume_command"] == f"codex resume {before['session_id']}"
    with_log = restore_session(source, 1, ["F4"]).as_json()
    records = [
        json.loads(line) for line in Path(with_log["fork"]).read_text(encoding="utf-8").splitlines()
    ]
    # Right after the compaction's record (Codex rebuilds from its replacement history and
    # the items after it), numbered in order with the rest.
    at = next(i for i, r in enumerate(records) if r["type"] == "compacted")
    added = records[at + 1]
    assert added["type"] == "response_item" and added["payload"]["role"] == "user"
    text = added["payload"]["content"][0]["text"]
    assert text.startswith(HEADER) and "## File F4: server.log" in text
    assert [r["ordinal"] for r in records] == list(range(len(records)))
    context = read_session(Path(with_log["fork"])).context
    said = [" ".join(b.content() for b in m.blocks) for m in context]
    summary = next(i for i, text in enumerate(said) if "Another language model" in text)
    assert said[summary + 1].startswith(HEADER)
    assert digest(source) == original


def test_bad_requests_are_one_line_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = copied(CLAUDE_2_1_332, tmp_path)
    for args, said in (
        (["--compaction", "2"], "no compaction 2: the session has 1 compaction"),
        (["--compaction", "1", "--with", "X9"], "has no item 'X9'"),
        (["--compaction", "1", "--with", "F1"], "F1 is still in the context"),
    ):
        assert main(["restore", str(source), *args]) == 2
        error = capsys.readouterr().err
        assert error.startswith(f"ctxtop: {source}: ") and said in error
        assert error.count("\n") == 1
    assert list(tmp_path.iterdir()) == [source]  # nothing written


def test_restore_text_and_dry_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = copied(CLAUDE_2_1_332, tmp_path)
    assert main(["restore", str(source), "--compaction", "1", "--with", "T3", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "compaction 1's summary and T3 re-added after it" in out
    assert "dry run: nothing written" in out
    assert list(tmp_path.iterdir()) == [source]

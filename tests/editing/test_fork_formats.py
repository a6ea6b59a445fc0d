"""Forks of every supported format: parse back, drop the expected tokens, keep pairs, leave the
original's bytes alone."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from ctxtop.engine.agents.session_reader import read_session
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks.edit import edit_session
from ctxtop.engine.sessions.ledger import encoding_for

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = [
    "tests/sessions/data/generated/claude-code/calc-main/e6da809c-ea6a-48e8-8ca6-02bf23adae92.jsonl",
    "tests/sessions/data/real/claude-code/public-d-kimuson-claude-code-viewer/"
    "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
    "tests/sessions/data/generated/claude-code/calc-autocompact/"
    "cab977aa-a7d9-408c-a2f0-9dcf156ac8c1.jsonl",
]
GENERIC = [
    "sample_sessions/openai-messages/agent-loop.jsonl",
    "sample_sessions/openai-messages/demo-chat.json",
]


def _copy(relative: str, tmp_path: Path) -> Path:
    project = tmp_path / "projects" / "-home-dev-calc"
    project.mkdir(parents=True)
    target = project / Path(relative).name
    shutil.copyfile(ROOT / relative, target)
    return target


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _pairs_intact(path: Path) -> None:
    state = read_session(path)
    calls = {b.tool_call_id for m in state.context for b in m.blocks if b.kind == "tool_use"}
    results = {b.tool_call_id for m in state.context for b in m.blocks if b.kind == "tool_result"}
    assert results <= calls
    assert calls == results or len(calls - results) <= 1  # only a last call in progress


@pytest.mark.parametrize("relative", CLAUDE + GENERIC)
def test_fork_parses_back_with_the_expected_drop(relative: str, tmp_path: Path) -> None:
    source = _copy(relative, tmp_path)
    digest = _digest(source)
    original = read_session(source)
    outcome = edit_session(source, Policy(keep_turns=0)).as_json()
    if not outcome["changed"]:
        pytest.fail("the sample should have results to clear")
    fork = Path(outcome["fork"])
    assert fork.parent == source.parent and fork != source
    assert _digest(source) == digest
    edited = read_session(fork)
    assert edited.agent == original.agent
    encoding = encoding_for(original)
    expected = 0
    for change in outcome["changed"]:
        call_id = change["tool_call_id"]
        before = original.tools[call_id].result_text or ""
        after = edited.tools[call_id].result_text or ""
        assert after.startswith("[ctxtop: old tool result cleared")
        expected += encoding.count(before) - encoding.count(after)
    # The preview's figures are the tokenizer's times the session's factor (learnt from its
    # requests; 1 when it has none), each total rounded on its own.
    saved = outcome["tokens_before"] - outcome["tokens_after"]
    assert expected > 0 and abs(saved - expected * outcome["tokenizer_factor"]) <= 1
    assert outcome["tokens_source"] == (
        "calibrated" if outcome["tokenizer_factor"] != 1 else "estimated"
    )
    unchanged = set(original.tools) - {c["tool_call_id"] for c in outcome["changed"]}
    for call_id in unchanged:
        assert edited.tools[call_id].result_text == original.tools[call_id].result_text
    _pairs_intact(fork)
    assert outcome["cache_rewrite_tokens"] > 0


@pytest.mark.parametrize("relative", CLAUDE)
def test_claude_fork_is_a_new_session_with_a_valid_chain(relative: str, tmp_path: Path) -> None:
    source = _copy(relative, tmp_path)
    outcome = edit_session(source, Policy(keep_turns=0)).as_json()
    session_id = outcome["session_id"]
    fork = Path(outcome["fork"])
    assert fork.name == f"{session_id}.jsonl"
    records = [json.loads(line) for line in fork.read_text(encoding="utf-8").splitlines()]
    ids = [r["sessionId"] for r in records if "sessionId" in r]
    assert ids and set(ids) == {session_id}
    uuids = {r["uuid"] for r in records if "uuid" in r}
    for record in records:
        parent = record.get("parentUuid")
        assert parent is None or parent in uuids
    assert outcome["resume_command"].endswith(f"claude --resume {session_id}")
    assert read_session(fork).session_id == session_id


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    source = _copy(GENERIC[0], tmp_path)
    before = sorted(source.parent.iterdir())
    outcome = edit_session(source, Policy(keep_turns=0), dry_run=True).as_json()
    assert outcome["fork"] is None and outcome["changed"]
    assert sorted(source.parent.iterdir()) == before


def _with_lone_surrogate(source: Path) -> None:
    """The session's first user request ends in an escaped lone surrogate ("\\ud800"), which a
    log can hold (JSON allows the escape; a tool's output may carry one)."""
    text = source.read_text(encoding="utf-8")
    if source.suffix == ".json":
        document = json.loads(text)
        user = next(m for m in document if m.get("role") == "user")
        user["content"] += " \ud800"
        source.write_text(json.dumps(document, indent=1), encoding="utf-8")
        return
    lines = text.splitlines()
    for index, line in enumerate(lines):
        record = json.loads(line)
        message = record.get("message", record)
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            message["content"] += " \ud800"
            lines[index] = json.dumps(record)
            break
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("relative", [CLAUDE[0], *GENERIC])
def test_a_lone_surrogate_in_the_log_is_kept_escaped_in_the_fork(
    relative: str, tmp_path: Path
) -> None:
    source = _copy(relative, tmp_path)
    _with_lone_surrogate(source)
    digest = _digest(source)
    outcome = edit_session(source, Policy(keep_turns=0)).as_json()
    fork = Path(outcome["fork"])
    read_session(fork)  # reads back
    data = fork.read_bytes()
    assert b"\\ud800" in data  # the escape, as the log had it
    lines = data.decode("utf-8").splitlines() if fork.suffix == ".jsonl" else [data.decode()]
    values = [json.loads(line) for line in lines if line.strip()]
    assert "\ud800" in json.dumps(values, ensure_ascii=False, indent=None)
    assert _digest(source) == digest

"""Every registered agent plugin against the same contract, on a sample session of that agent:
it detects its own sample (and no other agent claims it), reads it, finds it in a fake HOME at
its default location, and does what its capability flags promise (edit, compact, resume)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from engine.agents import AGENTS, detect
from engine.agents.session_reader import read_session
from engine.editing.policy import Policy
from engine.forks.compact import compact_session
from engine.forks.edit import edit_session
from engine.sessions.adapter import DETECT_RECORDS

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_sessions"
# Each agent's sample, and where the agent itself keeps such a file under HOME (None: the
# generic format has no default location).
CASES = {
    "claude-code": (
        "claude-code/projects/-home-dev-demo-project/b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl",
        ".claude/projects/-home-dev-demo-project/b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl",
    ),
    "codex": (
        "codex/sessions/2026/11/23/rollout-2026-11-23T03-15-46-01a20667-0c69-7050-8ebb-bb746d3f79b0.jsonl",
        ".codex/sessions/2026/11/23/rollout-2026-11-23T03-15-46-01a20667-0c69-7050-8ebb-bb746d3f79b0.jsonl",
    ),
    "gemini-cli": (
        "gemini-cli/.gemini/tmp/calc-gemini/chats/session-2026-11-23T03-12-196d3f0b.jsonl",
        ".gemini/tmp/calc-gemini/chats/session-2026-11-23T03-12-196d3f0b.jsonl",
    ),
    "copilot-cli": (
        "copilot-cli/session-state/244e876e-1a43-4419-88f6-972d1b6e8877/events.jsonl",
        ".copilot/session-state/244e876e-1a43-4419-88f6-972d1b6e8877/events.jsonl",
    ),
    "openai-messages": ("openai-messages/agent-loop.jsonl", None),
}


def test_every_agent_has_a_case() -> None:
    assert set(CASES) == set(AGENTS)


def head_records(path: Path) -> list[object]:
    lines = path.read_text(encoding="utf-8").splitlines()
    if path.suffix == ".json":
        return [json.loads(path.read_text(encoding="utf-8"))]
    return [json.loads(line) for line in lines[:DETECT_RECORDS] if line.strip()]


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_agent_reads_its_own_sample(name: str) -> None:
    sample = SAMPLES / CASES[name][0]
    assert detect(head_records(sample)) is AGENTS[name].reader  # and no other agent wins
    state = read_session(sample)
    assert state.agent == name
    assert state.responses and state.context


@pytest.mark.parametrize("name", sorted(n for n, (_, home) in CASES.items() if home))
def test_discovery_finds_the_sample_at_the_default_place(name: str, tmp_path: Path) -> None:
    sample, where = CASES[name]
    assert where is not None
    target = tmp_path / where
    target.parent.mkdir(parents=True)
    shutil.copyfile(SAMPLES / sample, target)
    assert list(AGENTS[name].reader.discover({}, tmp_path)) == [target]


# Samples with tool results to clear, where the bundled one has none.
EDITED = {
    "codex": ROOT / "tests/data/one_turn/codex/"
    "rollout-2026-11-25T06-15-28-01a21158-4b37-7df3-a955-6d9dc9b742b0.jsonl"
}


def copy_of(name: str, tmp_path: Path) -> Path:
    sample = EDITED.get(name, SAMPLES / CASES[name][0])
    target = tmp_path / sample.name
    shutil.copyfile(sample, target)
    return target


@pytest.mark.parametrize("name", sorted(CASES))
def test_editing_does_what_the_flag_says(name: str, tmp_path: Path) -> None:
    session = copy_of(name, tmp_path)
    policy = Policy(keep_cycles=0)
    if not AGENTS[name].can_edit:
        with pytest.raises(Exception, match=f"editing {name} sessions is not supported"):
            edit_session(session, policy, dry_run=True)
        return
    outcome = edit_session(session, policy)
    fork = Path(outcome["fork"])
    assert fork.exists() and fork != session
    assert read_session(fork).agent == name  # the fork reads back as the same agent's
    if AGENTS[name].can_resume and outcome["resume_command"]:
        assert outcome["session_id"] in outcome["resume_command"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_compaction_does_what_the_flag_says(name: str, tmp_path: Path) -> None:
    session = copy_of(name, tmp_path)
    if not AGENTS[name].can_compact:
        with pytest.raises(Exception, match=f"compacting {name} sessions is not supported"):
            compact_session(session, keep_rounds=0, dry_run=True)
        return
    outcome = compact_session(session, keep_rounds=1)
    fork = Path(outcome["fork"])
    assert fork.exists() and fork != session
    assert read_session(fork).agent == name
    if outcome["resume_command"]:
        assert outcome["session_id"] in outcome["resume_command"]

"""Every registered agent plugin against the same contract, on a sample session of that agent:
it detects its own sample (and no other agent claims it), reads it, names a layout profile that
loads, finds it in a fake HOME at its default location, and does what its capability flags
promise (edit, compact, resume); what they rule out is refused in one line naming the file,
before the session is read whole."""

from __future__ import annotations

import json
import shutil
import tracemalloc
from pathlib import Path

import pytest
from opencode_db import load_sample

from ctxtop.engine.agents import AGENTS, detect, stored_session
from ctxtop.engine.agents.session_reader import agent_of, read_session
from ctxtop.engine.analysis.profiles import load_profile
from ctxtop.engine.cli.main import main
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.errors import InputError
from ctxtop.engine.forks.compact import compact_session
from ctxtop.engine.forks.edit import edit_session
from ctxtop.engine.live.sessions_table import agent_roots
from ctxtop.engine.sessions.adapter import DETECT_RECORDS, NOT_MINE

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
    # A SQL dump of the database, loaded into a new one (tests/opencode_db.py).
    "opencode": ("opencode/opencode_main.sql", ".local/share/opencode/opencode.db"),
    "pi": (
        "pi/sessions/--home-dev-pi-projects-calc-pi--/"
        "2026-11-29T01-35-09-145Z_01a224f1-1558-7141-8f66-577d33263d8e.jsonl",
        ".pi/agent/sessions/--home-dev-pi-projects-calc-pi--/"
        "2026-11-29T01-35-09-145Z_01a224f1-1558-7141-8f66-577d33263d8e.jsonl",
    ),
    "qwen-code": (
        "qwen-code/projects/-home-dev-qwen-projects-calc-qwen/chats/"
        "443ea2f2-c530-473d-b86e-35a04a280ca7.jsonl",
        ".qwen/projects/-home-dev-qwen-projects-calc-qwen/chats/"
        "443ea2f2-c530-473d-b86e-35a04a280ca7.jsonl",
    ),
    # (written from VS Code's serializer source: sample_sessions/vscode-copilot-chat/PROVENANCE.md)
    "vscode-copilot-chat": (
        "vscode-copilot-chat/User/workspaceStorage/5f3c8e1a9b2d4c6e8f0a1b2c3d4e5f60/chatSessions/"
        "3b8c2f1e-7d4a-4c9b-a1e2-5f6d7c8b9a01.jsonl",
        ".config/Code/User/workspaceStorage/5f3c8e1a9b2d4c6e8f0a1b2c3d4e5f60/chatSessions/"
        "3b8c2f1e-7d4a-4c9b-a1e2-5f6d7c8b9a01.jsonl",
    ),
}


def sample_of(name: str, tmp_path: Path) -> Path:
    """The agent's sample session: its file, or for an agent keeping sessions in a database,
    the session in a new database holding the sample."""
    sample = SAMPLES / CASES[name][0]
    if sample.suffix != ".sql":
        return sample
    return load_sample(tmp_path / "store" / "opencode.db")


def test_every_agent_has_a_case() -> None:
    assert set(CASES) == set(AGENTS)


def head_records(path: Path) -> list[object]:
    stored = stored_session(path)
    if stored is not None:
        return [json.loads(raw) for _, raw in stored[1].read().lines[:DETECT_RECORDS]]
    lines = path.read_text(encoding="utf-8").splitlines()
    if path.suffix == ".json":
        return [json.loads(path.read_text(encoding="utf-8"))]
    return [json.loads(line) for line in lines[:DETECT_RECORDS] if line.strip()]


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_agent_reads_its_own_sample(name: str, tmp_path: Path) -> None:
    sample = sample_of(name, tmp_path)
    head = head_records(sample)
    assert detect(head) is AGENTS[name].reader
    others = {other: agent.reader.detect(head) for other, agent in AGENTS.items() if other != name}
    assert set(others.values()) == {NOT_MINE}, others  # no other agent claims it at all
    assert agent_of(sample) is AGENTS[name]  # told from the first lines alone
    state = read_session(sample)
    assert state.agent == name
    assert state.responses and state.context  # its requests, and the context the model sees


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_agent_names_a_layout_profile_that_loads(name: str) -> None:
    profile = load_profile(AGENTS[name].profile)
    assert profile.name == AGENTS[name].profile and profile.sections


@pytest.mark.parametrize("name", sorted(n for n, (_, home) in CASES.items() if home))
def test_discovery_finds_the_sample_at_the_default_place(name: str, tmp_path: Path) -> None:
    sample, where = CASES[name]
    assert where is not None
    target = tmp_path / where
    target = _place(sample, target)
    assert list(AGENTS[name].discover({}, tmp_path)) == [target]
    # The live sessions table takes the same file for a session when it is written.
    roots = agent_roots({}, tmp_path)
    assert [root.agent for root in roots if root.holds_session(target)] == [name]


def _place(sample: str, target: Path) -> Path:
    """The sample where the agent keeps it: a file copied, or a database loaded."""
    if target.suffix == ".db":  # the sample loaded where the agent keeps its database
        return load_sample(target)
    target.parent.mkdir(parents=True)
    shutil.copyfile(SAMPLES / sample, target)
    return target


@pytest.mark.parametrize("name", sorted(n for n, (_, home) in CASES.items() if home))
def test_the_agents_home_variable_moves_its_place(name: str, tmp_path: Path) -> None:
    sample, where = CASES[name]
    files = AGENTS[name].sessions
    assert where is not None and files is not None and files.variable is not None
    moved = tmp_path / "elsewhere"
    target = _place(
        sample, moved / Path(where).relative_to(files.default.removeprefix("~").lstrip("/"))
    )
    env = {files.variable: str(moved)}
    assert list(AGENTS[name].discover(env, tmp_path / "home")) == [target]
    assert files.where(env).startswith(str(moved))


# Samples with tool results to clear, where the bundled one has none.
EDITED = {
    "codex": ROOT / "tests/data/one_turn/codex/"
    "rollout-2026-11-25T06-15-28-01a21158-4b37-7df3-a955-6d9dc9b742b0.jsonl",
    # (the sample's first 26 lines: its first turn, before the compressions)
    "qwen-code": ROOT / "tests/agents/data/qwen-code-first-turn/"
    "443ea2f2-c530-473d-b86e-35a04a280ca7.jsonl",
}


def copy_of(name: str, tmp_path: Path) -> Path:
    if name not in EDITED and CASES[name][0].endswith(".sql"):
        return sample_of(name, tmp_path)
    sample = EDITED.get(name, SAMPLES / CASES[name][0])
    target = tmp_path / sample.name
    shutil.copyfile(sample, target)
    return target


def refused(session: Path, doing: str, name: str, run: object) -> None:
    """``run()`` refuses in one line naming the session file."""
    with pytest.raises(InputError) as caught:
        run()  # type: ignore[operator]
    message = str(caught.value)
    assert message == f"{session}: {doing} {name} sessions is not supported yet"


def the_fork_reads_back(name: str, session: Path, outcome: dict[str, object]) -> None:
    fork = Path(str(outcome["fork"]))
    assert fork.exists() and fork != session
    assert read_session(fork).agent == name  # the fork reads back as the same agent's
    command = outcome["resume_command"]
    if AGENTS[name].can_resume:
        assert isinstance(command, str) and str(outcome["session_id"]) in command
    else:
        assert command is None


@pytest.mark.parametrize("name", sorted(CASES))
def test_editing_does_what_the_flag_says(name: str, tmp_path: Path) -> None:
    session = copy_of(name, tmp_path)
    policy = Policy(keep_turns=0)
    if not AGENTS[name].can_edit:
        refused(session, "editing", name, lambda: edit_session(session, policy, dry_run=True))
        return
    listed = sorted(tmp_path.rglob("*"))  # (a session in a database: the database's files)
    preview = edit_session(session, policy, dry_run=True).as_json()
    assert preview["agent"] == name and preview["fork"] is None
    assert preview["tokens_after"] < preview["tokens_before"]  # it clears something
    assert sorted(tmp_path.rglob("*")) == listed  # a dry run writes nothing
    outcome = edit_session(session, policy).as_json()
    assert outcome["tokens_after"] == preview["tokens_after"]  # the preview was the fork's
    the_fork_reads_back(name, session, outcome)


@pytest.mark.parametrize("name", sorted(CASES))
def test_compaction_does_what_the_flag_says(name: str, tmp_path: Path) -> None:
    session = copy_of(name, tmp_path)
    if not AGENTS[name].can_compact:
        refused(
            session,
            "compacting",
            name,
            lambda: compact_session(session, keep_rounds=0, dry_run=True),
        )
        return
    listed = sorted(tmp_path.rglob("*"))
    preview = compact_session(session, keep_rounds=1, dry_run=True).as_json()
    assert preview["fork"] is None and preview["summarised_rounds"] > 0
    assert sorted(tmp_path.rglob("*")) == listed
    outcome = compact_session(session, keep_rounds=1).as_json()
    assert outcome["tokens_after"] == preview["tokens_after"]
    the_fork_reads_back(name, session, outcome)


PADDING_MB = 16


@pytest.mark.parametrize("name", sorted(CASES))
def test_restore_does_what_the_flag_says(
    name: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Where the flag allows it, the sample forks back at its first compaction (the samples of
    the agents that can restore have one), dry run; elsewhere one line says it is not
    possible."""
    sample = sample_of(name, tmp_path)
    code = main(["restore", str(sample), "--compaction", "1", "--dry-run", "--json"])
    said = capsys.readouterr()
    if AGENTS[name].can_restore:
        assert code == 0, said.err
        assert json.loads(said.out)["restore"] == "before"
    else:
        assert code == 2 and said.err.count("\n") == 1
        assert f"restore is not possible for {name} sessions" in said.err


# (A session in a database is told by its name alone: tests/agents/test_opencode.py.)
FILES = sorted(name for name, (sample, _) in CASES.items() if not sample.endswith(".sql"))


@pytest.mark.parametrize(
    ("name", "doing"),
    [(n, "editing") for n in FILES if not AGENTS[n].can_edit]
    + [(n, "compacting") for n in FILES if not AGENTS[n].can_compact],
)
def test_what_the_flags_rule_out_is_refused_before_the_session_is_read(
    name: str, doing: str, tmp_path: Path
) -> None:
    # A long session of an agent ctxtop cannot write: its sample's lines over and over.
    sample = (SAMPLES / CASES[name][0]).read_bytes()
    session = tmp_path / Path(CASES[name][0]).name
    with session.open("wb") as out:
        while out.tell() < PADDING_MB << 20:
            out.write(sample)
    run = {
        "editing": lambda: edit_session(session, Policy(keep_turns=0), dry_run=True),
        "compacting": lambda: compact_session(session, keep_rounds=0, dry_run=True),
    }[doing]
    tracemalloc.start()
    try:
        refused(session, doing, name, run)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < (PADDING_MB << 20) // 4  # the first lines told, not the whole file

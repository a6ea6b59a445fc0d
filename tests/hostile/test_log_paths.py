"""Names taken from a log (session ids, cwd, call ids, file names) never lead ctxtop to read or
write outside the directory meant for them: ``../``, absolute paths, NUL, newlines."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_run import ROOT, SAMPLES, assert_clean_end, run_cli

HOSTILE_IDS = ["../elsewhere", "/tmp", "..", "a\x00b", "line\nbreak", "sub/../../elsewhere"]


def _gemini_with_session_id(tmp_path: Path, session_id: str) -> Path:
    """The Gemini sample under tmp_path/chats, its sessionId replaced; beside chats/, a directory
    ``elsewhere`` holds a sub-agent-like chat that is no part of this session."""
    chats = tmp_path / "project" / "chats"
    chats.mkdir(parents=True)
    lines = SAMPLES["gemini-cli"].read_bytes().splitlines()
    first = json.loads(lines[0])
    first["sessionId"] = session_id
    session = chats / SAMPLES["gemini-cli"].name
    session.write_bytes(b"\n".join([json.dumps(first).encode(), *lines[1:]]) + b"\n")
    stray = tmp_path / "project" / "elsewhere"
    stray.mkdir()
    child = next(SAMPLES["gemini-cli"].parent.glob("*/*.jsonl"))
    shutil.copyfile(child, stray / "stray-agent.jsonl")
    shutil.copyfile(child, tmp_path / "elsewhere-agent.jsonl")
    return session


@pytest.mark.parametrize("session_id", HOSTILE_IDS)
def test_a_gemini_session_id_does_not_pick_sub_agents_from_elsewhere(
    tmp_path: Path, session_id: str
) -> None:
    session = _gemini_with_session_id(tmp_path, session_id)
    ended = run_cli("report", str(session), "--json")
    assert_clean_end(ended, session)
    assert ended.code == 0
    report = json.loads(ended.out)
    assert report["subagents"] == []


CODEX_TURN = next((ROOT / "tests/data/one_turn/codex").glob("rollout-*.jsonl"))


def _files(root: Path) -> set[Path]:
    return {path for path in root.rglob("*") if path.is_file() or path.is_symlink()}


@pytest.mark.parametrize("hostile", ["../../escaped", "/tmp/absolute", "a\x00b", "x\ny", ".."])
@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_ids_from_the_log_do_not_choose_where_forks_go(
    tmp_path: Path, agent: str, hostile: str
) -> None:
    """Every id field of the log (session id, agent id, uuids, call ids, cwd) replaced by a
    hostile path: edit and compact write exactly one new file each, a fresh id beside the
    session, and nothing anywhere else."""
    # Sessions with something to compact (the Codex sample's compaction would not be smaller,
    # which compact refuses): a real Codex 0.171 turn of 12 tool calls.
    sample = CODEX_TURN if agent == "codex" else SAMPLES["claude-code"]
    session_dir = tmp_path / "deep" / "sessions"
    session_dir.mkdir(parents=True)
    out = []
    for raw in sample.read_bytes().splitlines():
        out.append(json.dumps(_ids_replaced(json.loads(raw), hostile)).encode())
    session = session_dir / sample.name
    session.write_bytes(b"\n".join(out) + b"\n")
    before = _files(tmp_path)
    forks = []
    for argv in (["edit", "--keep-cycles", "0"], ["compact", "--keep-rounds", "0"]):
        ended = run_cli(argv[0], str(session), *argv[1:], "--json")
        assert_clean_end(ended, session)
        written = json.loads(ended.out)["fork"] if ended.code == 0 else None
        new = _files(tmp_path) - before
        assert new == ({Path(written)} if written else set())
        before |= new
        forks += [Path(written)] if written else []
    assert forks  # compact always writes (the Codex sample has nothing for edit to clear)
    for fork in forks:
        assert fork.parent == session_dir and "\n" not in fork.name and ".." not in fork.name


_ID_KEYS = {"sessionId", "session_id", "id", "agentId", "uuid", "parentUuid", "cwd", "call_id",
            "tool_use_id", "thread_id", "tool_call_id", "persistedOutputPath"}  # fmt: skip


def _ids_replaced(value: object, hostile: str) -> object:
    """Each id becomes the hostile text and the id (ids stay distinct, so the session keeps its
    shape)."""
    if isinstance(value, dict):
        return {
            key: f"{hostile}{item}"
            if key in _ID_KEYS and isinstance(item, str)
            else _ids_replaced(item, hostile)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_ids_replaced(item, hostile) for item in value]
    return value

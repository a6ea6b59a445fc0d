"""Names taken from a log (session ids, cwd, call ids, file names) never lead ctxtop to read or
write outside the directory meant for them: ``../``, absolute paths, NUL, newlines."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_run import SAMPLES, assert_clean_end, run_cli

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

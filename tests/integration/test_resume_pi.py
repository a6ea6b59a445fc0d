"""The real Pi CLI (0.73.1) resumes a fork written by ``ctxtop edit``, one written by ``ctxtop
compact`` and both kinds ``ctxtop restore`` writes, of the Pi sample session, against the
project's own model server (Anthropic Messages, which Pi speaks as the ``anthropic-messages`` API
of a custom provider): the request it sends holds the placeholder (the summary, the re-added
item), not the cleared result (the summarised rounds), and Pi appends to the fork, which then
reads with the API's figures.

The CLI (pinned) is installed with npm into a cache dir on first use; the test is skipped, saying
why, only when it cannot be installed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from functools import partial
from pathlib import Path

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

from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks.edit import edit_session
from ctxtop.engine.forks.restore import HEADER

PI_VERSION = "0.73.1"
ROOT = Path(__file__).resolve().parents[2]
SAMPLE = next((ROOT / "sample_sessions/pi/sessions").rglob("*.jsonl"))
# Two lines of a result the edit clears (the first read of src/calc/cli.py, which the write after
# it changed), as they appear in a JSON request body.
CLEARED = r"a, op, b = argv\n    print(OPS"
PROMPT = "what did the CLI module hold?"


def pi_home(root: Path, port: int) -> tuple[Path, Path, Path]:
    """A HOME whose Pi talks to the model server, a project, and the sample as its session
    (its header's cwd made the project's: Pi refuses a session whose cwd is gone)."""
    home, cwd = root / "home", root / "project"
    cwd.mkdir(parents=True)
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    provider = {
        "baseUrl": f"http://127.0.0.1:{port}",
        "api": "anthropic-messages",
        "apiKey": "CTXTOP_TEST_PI_KEY",
        "models": [{"id": "claude-sonnet-4-5", "contextWindow": 200000, "maxTokens": 16384}],
    }
    (agent / "models.json").write_text(json.dumps({"providers": {"fake": provider}}))
    sessions = agent / "sessions" / ("--" + re.sub(r"[/\\:]", "-", str(cwd).lstrip("/")) + "--")
    sessions.mkdir(parents=True)
    lines = SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    header["cwd"] = str(cwd)
    session = sessions / SAMPLE.name
    session.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    return home, cwd, session


def resume(pi: Path, home: Path, cwd: Path, session_id: str) -> subprocess.CompletedProcess[str]:
    """``pi --session ID -p PROMPT``, offline, against the model server of ``home``'s models."""
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "PI_OFFLINE": "1",
        "PI_TELEMETRY": "0",
        "CTXTOP_TEST_PI_KEY": "dummy-key-for-the-test-server",
    }
    return subprocess.run(
        [str(pi), "--provider", "fake", "--model", "claude-sonnet-4-5", "--mode", "json",
         "--session", session_id, "-p", PROMPT],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip


def test_pi_resumes_the_fork_with_placeholders(tmp_path: Path) -> None:
    pi = npm_cli("@mariozechner/pi-coding-agent", PI_VERSION, "pi")
    with ModelServer() as server:
        home, cwd, session = pi_home(tmp_path, server.port)
        original = hashlib.sha256(session.read_bytes()).hexdigest()
        outcome = edit_session(session, Policy(keep_turns=0)).as_json()
        assert outcome["changed"] and outcome["resume_command"].startswith("pi --session ")
        assert_fork_estimated(outcome)
        done = resume(pi, home, cwd, outcome["session_id"])
        requests = server.requests
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    assert_resumed_with_placeholders(requests, PROMPT, CLEARED, outcome)
    assert hashlib.sha256(session.read_bytes()).hexdigest() == original
    assert_fork_reported(outcome)
    assert_undo_removes_the_resumed_fork(outcome)


# The sample's last turn: its request, and the answer of its last round.
REQUEST = "Make the CLI print a friendly error instead of a traceback"
LAST_ANSWER = "The CLI now prints `error: division by zero"


def test_pi_resumes_the_compacted_fork_from_the_summary(tmp_path: Path) -> None:
    """``ctxtop compact`` keeping the last round: the cut falls inside the last turn, so the fork
    holds Pi's compaction entry on a branch keeping that turn's request and its last round.
    Pi sends the summary, the request and the round, not the summarised rounds."""
    pi = npm_cli("@mariozechner/pi-coding-agent", PI_VERSION, "pi")
    with ModelServer() as server:
        home, cwd, session = pi_home(tmp_path, server.port)
        original = hashlib.sha256(session.read_bytes()).hexdigest()
        outcome = compacted_inside_a_turn(session, CLEARED)
        done = resume(pi, home, cwd, outcome["session_id"])
        requests = server.requests
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    assert_resumed_from_summary(requests, (REQUEST, LAST_ANSWER, PROMPT), CLEARED, outcome)
    assert hashlib.sha256(session.read_bytes()).hexdigest() == original
    assert_fork_reported(outcome)
    assert_undo_removes_the_resumed_fork(outcome)


# The sample's compaction: a line of its summary, and what it dropped (the first command's
# output; the second request, which its summary does not carry: U2).
SUMMARY = "clearer than ZeroDivisionError for callers"
DROPPED_OUTPUT = "drwxr-xr-x"
DROPPED_REQUEST = "Check the first few hundred lines of server.log"


def test_pi_resumes_both_restore_forks(tmp_path: Path) -> None:
    """``ctxtop restore`` of the sample's compaction: from just before it, Pi sends the history
    it dropped and not its summary; with U2 re-added, the summary, then ctxtop's marked
    message with U2, then the prompt, and not the dropped output."""
    pi = npm_cli("@mariozechner/pi-coding-agent", PI_VERSION, "pi")
    with ModelServer() as server:
        home, cwd, session = pi_home(tmp_path, server.port)
        run = partial(resume, pi, home, cwd)
        before, readded = restored_requests(server, session, 1, "U2", PROMPT, run)
    assert DROPPED_OUTPUT in before and DROPPED_REQUEST in before and SUMMARY not in before
    order = [readded.find(text) for text in (SUMMARY, HEADER, DROPPED_REQUEST, PROMPT)]
    assert -1 not in order and order == sorted(order), order
    assert DROPPED_OUTPUT not in readded

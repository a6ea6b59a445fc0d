"""The real Claude Code CLI resumes a fork written by ``ctxtop edit``, against the project's own
model server; the request it sends holds the placeholders, not the cleared text.

The CLI (pinned) is installed with npm into a cache dir on first use; the test is skipped only
when npm or the package cannot be installed, and says why.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

from agents import (
    CLAUDE_CODE_VERSION,
    ClaudeProject,
    assert_fork_estimated,
    assert_fork_reported,
    claude_bin,
    claude_main_request,
)

from engine.editing.policy import Policy
from engine.forks.edit import edit_session

CLEARED_LINE = "a78de21 Handle division by zero in div() and the CLI"
PROMPT = "What did git log show?"


def test_claude_code_resumes_the_fork_with_placeholders(tmp_path: Path) -> None:
    claude = claude_bin()
    project = ClaudeProject.make(tmp_path)
    source = project.session
    assert CLEARED_LINE in source.read_text(encoding="utf-8")
    original = hashlib.sha256(source.read_bytes()).hexdigest()
    outcome = edit_session(source, Policy(keep_cycles=0)).as_json()
    assert outcome["changed"], "the sample has a result to clear"
    assert_fork_estimated(outcome)
    requests = project.resume(claude, outcome["session_id"], PROMPT)
    sent = json.dumps(claude_main_request(requests, PROMPT)["messages"], ensure_ascii=False)
    assert "[ctxtop: old tool result cleared" in sent
    assert_fork_reported(outcome)
    assert CLEARED_LINE not in sent
    # The agent appended its new turn to the fork; the original was never touched.
    assert PROMPT in Path(outcome["fork"]).read_text(encoding="utf-8")
    assert hashlib.sha256(source.read_bytes()).hexdigest() == original
    version = subprocess.run(
        [str(claude), "--version"], env=project.env(0), capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert version.stdout.startswith(CLAUDE_CODE_VERSION)

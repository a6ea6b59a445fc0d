"""The real Claude Code CLI resumes a fork written by ``ctxtop edit``, against the project's own
model server; the request it sends holds the placeholders, not the cleared text. Forks of a
session an older release wrote and of one the pinned release wrote (its new record types copied
into the fork) both resume.

The CLI (pinned) is installed with npm into a cache dir on first use; the test is skipped only
when npm or the package cannot be installed, and says why.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from agents import (
    CLAUDE_CODE_VERSION,
    CLAUDE_SAMPLES,
    ClaudeProject,
    assert_fork_estimated,
    assert_fork_reported,
    assert_undo_removes_the_resumed_fork,
    claude_bin,
    claude_main_request,
)

from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks.edit import edit_session

# The git log line in the last tool result of each sample (the commit ids differ).
CLEARED_LINES = {
    "2.1.197": "a78de21 Handle division by zero in div() and the CLI",
    "2.1.332": "62788ed Handle division by zero in div() and the CLI",
}
PROMPT = "What did git log show?"


def _tool_results(messages: list[dict[str, Any]]) -> list[Any]:
    return [
        block
        for message in messages
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


@pytest.mark.parametrize("written_by", sorted(CLAUDE_SAMPLES))
def test_claude_code_resumes_the_fork_with_placeholders(tmp_path: Path, written_by: str) -> None:
    claude = claude_bin()
    project = ClaudeProject.make(tmp_path, CLAUDE_SAMPLES[written_by])
    cleared = CLEARED_LINES[written_by]
    source = project.session
    assert cleared in source.read_text(encoding="utf-8")
    original = hashlib.sha256(source.read_bytes()).hexdigest()
    outcome = edit_session(source, Policy(keep_turns=0)).as_json()
    assert outcome["changed"], "the sample has a result to clear"
    assert_fork_estimated(outcome)
    requests = project.resume(claude, outcome["session_id"], PROMPT)
    # The tool results the request carries (a session_context attachment of the 2.1.332 log
    # names the same commit in its git status, and stays).
    messages = claude_main_request(requests, PROMPT)["messages"]
    sent = json.dumps(_tool_results(messages), ensure_ascii=False)
    assert "[ctxtop: old tool result cleared" in sent
    assert_fork_reported(outcome)
    assert cleared not in sent
    # The agent appended its new turn to the fork; the original was never touched.
    assert PROMPT in Path(outcome["fork"]).read_text(encoding="utf-8")
    assert hashlib.sha256(source.read_bytes()).hexdigest() == original
    assert_undo_removes_the_resumed_fork(outcome)
    version = subprocess.run(
        [str(claude), "--version"], env=project.env(0), capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert version.stdout.startswith(CLAUDE_CODE_VERSION)

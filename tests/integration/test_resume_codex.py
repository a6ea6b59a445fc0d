"""The real Codex CLI resumes a fork written by ``ctxtop edit``, against the project's own model
server (Responses API); the request it sends holds the placeholder, not the cleared output.

Codex writes the session itself first (it runs ``cat big.txt`` because the server asks it to).
The CLI (pinned) is installed with npm into a cache dir on first use; the test is skipped, saying
why, only when it cannot be installed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from agents import (
    BIG_LINE,
    assert_fork_estimated,
    assert_fork_reported,
    assert_undo_removes_the_resumed_fork,
    codex_home,
)

from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks.edit import edit_session


def test_codex_resumes_the_fork_with_placeholders(tmp_path: Path) -> None:
    with codex_home(tmp_path) as codex:
        source = codex.first_session()
        assert BIG_LINE.format(299) in source.read_text(encoding="utf-8")
        original = hashlib.sha256(source.read_bytes()).hexdigest()
        outcome = edit_session(source, Policy(keep_turns=0)).as_json()
        assert outcome["changed"] and outcome["resume_command"].startswith("codex resume ")
        assert_fork_estimated(outcome)
        sent = codex.resume(outcome["session_id"], "what was in it?")
    assert "what was in it?" in sent
    assert "[ctxtop: old tool result cleared" in sent
    assert_fork_reported(outcome)
    assert BIG_LINE.format(150) not in sent
    assert "what was in it?" in Path(outcome["fork"]).read_text(encoding="utf-8")
    assert hashlib.sha256(source.read_bytes()).hexdigest() == original
    assert_undo_removes_the_resumed_fork(outcome)

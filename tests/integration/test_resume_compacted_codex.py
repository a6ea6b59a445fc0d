"""The real Codex CLI resumes a session written by ``ctxtop compact``, against the project's own
model server (Responses API): the request it sends is the standing context, the summary and the
new prompt, not the dropped history (the big command output).

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

from ctxtop.engine.compaction.handoff import OPENING
from ctxtop.engine.forks.compact import compact_session


def test_codex_resumes_the_compacted_session_from_the_summary(tmp_path: Path) -> None:
    with codex_home(tmp_path) as codex:
        source = codex.first_session()
        assert BIG_LINE.format(150) in source.read_text(encoding="utf-8")
        original = hashlib.sha256(source.read_bytes()).hexdigest()
        outcome = compact_session(source, keep_rounds=0).as_json()
        # Two rounds: the model's call (and its output), then its answer.
        assert outcome["summarised_rounds"] == outcome["rounds"] == 2 and outcome["resume_command"]
        assert "show me big.txt" in outcome["summary"]
        assert_fork_estimated(outcome)
        sent = codex.resume(outcome["session_id"], "what was in it?")
    assert_fork_reported(outcome)
    assert OPENING in sent and "what was in it?" in sent
    assert sent.index(OPENING) < sent.index("what was in it?")
    assert BIG_LINE.format(150) not in sent  # the command's output was summarised away
    assert sent.count("Full transcript of the conversation before this summary") == 1
    assert "what was in it?" in Path(outcome["fork"]).read_text(encoding="utf-8")
    assert hashlib.sha256(source.read_bytes()).hexdigest() == original
    assert_undo_removes_the_resumed_fork(outcome)

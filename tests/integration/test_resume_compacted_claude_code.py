"""The real Claude Code CLI resumes a session written by ``ctxtop compact``, against the
project's own model server; the request it sends starts from the summary, not from the history
the compaction dropped, and carries the kept round after it; for a session an older release
wrote and for one the pinned release wrote.

The CLI (pinned) is installed with npm into a cache dir on first use; the test is skipped only
when npm or the package cannot be installed, and says why.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from agents import (
    CLAUDE_SAMPLES,
    ClaudeProject,
    assert_fork_estimated,
    assert_fork_reported,
    assert_undo_removes_the_resumed_fork,
    claude_bin,
    claude_main_request,
)

from ctxtop.engine.agents.session_reader import read_session
from ctxtop.engine.compaction.handoff import OPENING
from ctxtop.engine.forks.compact import compact_session

KEPT_REQUEST = "What have we changed so far? Keep it short."
# Only in the dropped history: a re-attached file's body, and the agent's own earlier summary's
# closing instruction (the new summary carries that summary's content, not its boilerplate).
DROPPED = ('OPS = {"+": add, "-": sub, "*": mul, "/": div}', "do not acknowledge the summary")
PROMPT = "Summarise what we did in one line."


def _text(message: dict[str, Any]) -> str:
    return json.dumps(message.get("content"), ensure_ascii=False)


@pytest.mark.parametrize("written_by", sorted(CLAUDE_SAMPLES))
def test_claude_code_resumes_the_compacted_session_from_the_summary(
    tmp_path: Path, written_by: str
) -> None:
    claude = claude_bin()
    project = ClaudeProject.make(tmp_path, CLAUDE_SAMPLES[written_by])
    source = project.session
    original = source.read_text(encoding="utf-8")
    assert all(json.dumps(text)[1:-1] in original for text in DROPPED)
    outcome = compact_session(source, keep_rounds=1).as_json()
    assert outcome["summarizer"] == "structured" and outcome["kept_rounds"] == 1
    assert_fork_estimated(outcome)
    # The usage ctxtop wrote into the kept responses is no request.
    assert read_session(Path(outcome["fork"])).api_requests == 0
    requests = project.resume(claude, outcome["session_id"], PROMPT)
    assert_fork_reported(outcome)
    messages = claude_main_request(requests, PROMPT)["messages"]
    # Claude Code merges consecutive user lines into one message (its own context, the summary,
    # the kept request): the order inside the conversation is what counts.
    sent = json.dumps(messages, ensure_ascii=False)
    assert OPENING in _text(messages[0])
    assert sent.index(OPENING) < sent.index(KEPT_REQUEST) < sent.index(PROMPT)
    assert sent.count("Full transcript of the conversation before this summary") == 1
    for dropped in DROPPED:
        assert dropped not in sent
    # The agent appended its new turn to the compacted session; the original is untouched.
    assert PROMPT in Path(outcome["fork"]).read_text(encoding="utf-8")
    assert hashlib.sha256(source.read_bytes()).hexdigest() == outcome["source_sha256"]
    assert_undo_removes_the_resumed_fork(outcome)
    assert source.read_text(encoding="utf-8") == original

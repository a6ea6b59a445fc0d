"""Compaction by tool-call round inside one long agentic turn, with the real Claude Code CLI.

Claude Code answers one prompt with 9 tool-call rounds and a final answer (against the project's
model server, ``one_turn``); ``compact_session(keep_rounds=2)`` cuts inside that turn, and the
real CLI resumes the fork. The request it sends holds the summary, the user's request verbatim
and exactly the tool results of the last 2 rounds (read from the raw session file here), and
fewer messages than resuming the original session with the same prompt.

The CLI (pinned) is installed with npm into a cache dir on first use; the test is skipped only
when npm or the package cannot be installed, and says why.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from agents import ClaudeProject, claude_bin, claude_main_request
from one_turn import (
    PROMPT,
    assert_summarised_away,
    claude_one_turn,
    claude_results,
    claude_rounds,
    file_name,
)

from ctxtop.engine.compaction.handoff import OPENING
from ctxtop.engine.forks.compact import compact_session

# Tool calls, one a model response; the final answer is round 10. Response 9 says what it does
# before its call: two assistant lines of one message.id, one round, kept whole.
ROUNDS = 9
NEXT = "Which marker line did the last file hold?"


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [{"type": "text", "text": content}] if isinstance(content, str) else content or []


def _texts(message: dict[str, Any]) -> list[str]:
    return [b["text"] for b in _blocks(message) if b.get("type") == "text"]


def _results(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The tool_result blocks the request carries: tool_use id -> content."""
    return {
        b["tool_use_id"]: b["content"]
        for m in messages
        for b in _blocks(m)
        if b.get("type") == "tool_result"
    }


def _where(messages: list[dict[str, Any]], found: Any) -> int:
    """The index of the first message for which ``found(message)`` holds."""
    return next(i for i, m in enumerate(messages) if found(m))


def test_claude_code_resumes_a_one_turn_session_compacted_by_round(tmp_path: Path) -> None:
    claude = claude_bin()
    project = claude_one_turn(tmp_path / "run", ROUNDS)
    source = project.session
    original = source.read_bytes()
    # The rounds as the raw file has them: one model response per message.id.
    rounds = claude_rounds(source)
    assert len(rounds) == ROUNDS + 1 and rounds[-1][1] == []  # the final answer calls nothing
    kept = [call for _, calls in rounds[-2:] for call in calls]
    older = [call for _, calls in rounds[:-2] for call in calls]
    assert len(kept) == 1 and len(older) == ROUNDS - 1
    written = claude_results(source)

    # The original, resumed with the same prompt in a copy of HOME (same project dir).
    copy = ClaudeProject(tmp_path / "copy" / "home", project.cwd, source)
    shutil.copytree(project.home, copy.home)
    whole = claude_main_request(copy.resume(claude, source.stem, NEXT), NEXT)["messages"]
    assert set(_results(whole)) == set(kept + older)  # the whole turn, every result

    outcome = compact_session(source, keep_rounds=2).as_json()
    requests = project.resume(claude, outcome["session_id"], NEXT)
    messages = claude_main_request(requests, NEXT)["messages"]

    # Standing context and summary, the user's request verbatim, the kept rounds, the new prompt.
    summary_at = _where(messages, lambda m: any(OPENING in t for t in _texts(m)))
    request_at = _where(messages, lambda m: PROMPT in _texts(m))
    last_call_at = _where(
        messages,
        lambda m: any(b.get("id") == kept[0] for b in _blocks(m) if m["role"] == "assistant"),
    )
    next_at = _where(messages, lambda m: NEXT in _texts(m))
    assert summary_at <= request_at <= last_call_at < next_at
    assert f"Next, {file_name(ROUNDS)}." in _texts(messages[last_call_at])
    # Exactly the last 2 rounds' tool results, verbatim; nothing of an older round's results.
    assert _results(messages) == {call: written[call] for call in kept}
    assert_summarised_away(json.dumps(messages, ensure_ascii=False), older, ROUNDS)
    assert len(messages) < len(whole)
    # The agent appended its new turn to the fork; the original is byte-identical.
    assert NEXT in Path(outcome["fork"]).read_text(encoding="utf-8")
    assert source.read_bytes() == original

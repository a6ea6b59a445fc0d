"""Compaction by tool-call round inside one long agentic turn, with the real Codex CLI.

Codex answers one prompt with 8 ``exec_command`` rounds and a final answer (against the project's
model server, Responses API, ``one_turn``); ``compact_session(keep_rounds=2)`` cuts inside that
turn into a ``replacement_history``, and the real CLI resumes the fork. The request it sends holds
the summary, the user's request verbatim and exactly the outputs of the last 2 rounds' calls
(read from the raw rollout here), and fewer input items than resuming the original session with
the same prompt.

The CLI (pinned) is installed with npm into a cache dir on first use; the test is skipped, saying
why, only when it cannot be installed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agents import codex_home
from one_turn import (
    PROMPT,
    assert_summarised_away,
    codex_replies,
    codex_results,
    codex_rounds,
    project_files,
)

from ctxtop.engine.compaction.handoff import OPENING
from ctxtop.engine.forks.compact import compact_session

ROUNDS = 8  # exec_command calls, one a model response; the final answer is round 9
NEXT = "Which marker line did the last file hold?"


def _texts(item: dict[str, Any]) -> list[str]:
    content = item.get("content")
    if item.get("type") != "message" or not isinstance(content, list):
        return []
    return [str(part.get("text")) for part in content if "text" in part]


def _outputs(items: list[dict[str, Any]]) -> dict[str, Any]:
    """The call outputs the request carries: call id -> output."""
    return {
        item["call_id"]: item["output"]
        for item in items
        if str(item.get("type", "")).endswith("call_output")
    }


def _where(items: list[dict[str, Any]], found: Any) -> int:
    return next(i for i, item in enumerate(items) if found(item))


def _session_id(rollout: Path) -> str:
    first = json.loads(rollout.read_text(encoding="utf-8").splitlines()[0])
    assert first["type"] == "session_meta", first["type"]
    return str(first["payload"]["id"])


def test_codex_resumes_a_one_turn_session_compacted_by_round(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    with codex_home(run, codex_replies(ROUNDS), project_files(ROUNDS)) as codex:
        source = codex.first_session(PROMPT)
        original = source.read_bytes()
        # The rounds as the raw rollout has them: consecutive model-side items are one response.
        rounds = codex_rounds(source)
        assert len(rounds) == ROUNDS + 1 and rounds[-1] == []  # the final answer calls nothing
        kept = [call for calls in rounds[-2:] for call in calls]
        older = [call for calls in rounds[:-2] for call in calls]
        assert len(kept) == 1 and len(older) == ROUNDS - 1
        written = codex_results(source)

        # The original, resumed with the same prompt in a copy of CODEX_HOME (same project).
        whole = codex.copy(tmp_path / "copy" / "home").resume_input(_session_id(source), NEXT)
        assert set(_outputs(whole)) == set(kept + older)  # the whole turn, every output

        outcome = compact_session(source, keep_rounds=2).as_json()
        assert outcome["resume_command"].startswith("codex resume ")
        items = codex.resume_input(outcome["session_id"], NEXT)

    # Standing context and summary, the user's request verbatim, the kept rounds, the new prompt.
    summary_at = _where(items, lambda item: any(OPENING in t for t in _texts(item)))
    request_at = _where(items, lambda item: PROMPT in _texts(item))
    last_call_at = _where(items, lambda item: item.get("call_id") == kept[0])
    next_at = _where(items, lambda item: NEXT in _texts(item))
    assert summary_at <= request_at < last_call_at < next_at
    # Exactly the last 2 rounds' outputs, verbatim; nothing of an older round's outputs.
    assert _outputs(items) == {call: written[call] for call in kept}
    assert_summarised_away(json.dumps(items, ensure_ascii=False), older, ROUNDS)
    assert len(items) < len(whole)
    # The agent appended its new turn to the fork; the original is byte-identical.
    assert NEXT in Path(outcome["fork"]).read_text(encoding="utf-8")
    assert source.read_bytes() == original

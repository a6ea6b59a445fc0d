"""Compaction counts tool-call rounds (one model response and the calls and results it produced),
so it works inside one long agentic turn: a single request answered by many tool calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from chat_files import fork_messages, write_chat

from ctxtop.engine.cli.main import main
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.forks.compact import compact_session

REQUEST = "Find why the build fails and fix it."


def call(n: int) -> dict[str, Any]:
    arguments = json.dumps({"command": f"cat part{n}.log"})
    return {
        "id": f"call_{n}",
        "type": "function",
        "function": {"name": "Bash", "arguments": arguments},
    }


def one_turn(calls: int, *, answered: bool = True, open_last: bool = False) -> list[dict[str, Any]]:
    """A system prompt, one request, then ``calls`` rounds of one tool call and its result each;
    the last round's result is missing when ``open_last``; a final answer when ``answered``."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": REQUEST},
    ]
    for n in range(1, calls + 1):
        messages.append(
            {"role": "assistant", "content": f"Looking at part {n}.", "tool_calls": [call(n)]}
        )
        if open_last and n == calls:
            break
        output = f"marker-round-{n}\n" + f"log line of part {n} " * 200
        messages.append({"role": "tool", "tool_call_id": f"call_{n}", "content": output})
    if answered and not open_last:
        messages.append({"role": "assistant", "content": "Fixed: the linker flag was missing."})
    return messages


def results_in(messages: list[dict[str, Any]]) -> list[str]:
    return [m["tool_call_id"] for m in messages if m.get("role") == "tool"]


def test_one_long_turn_is_compacted_by_rounds(tmp_path: Path) -> None:
    outcome = compact_session(write_chat(tmp_path, one_turn(10)), keep_rounds=2).as_json()
    assert (outcome["rounds"], outcome["turns"]) == (11, 1)  # ten call rounds and the answer
    assert (outcome["summarised_rounds"], outcome["kept_rounds"]) == (9, 2)
    assert outcome["kept_request"] and outcome["tokens_after"] < outcome["tokens_before"]
    messages = fork_messages(outcome)
    assert messages[0]["role"] == "system"
    assert messages[1]["content"].endswith(outcome["summary"])
    assert "current request follows it verbatim" in messages[1]["content"]
    assert messages[2] == {"role": "user", "content": REQUEST}  # the request, verbatim
    assert results_in(messages) == ["call_10"]  # the kept rounds: call 10 and the answer
    assert messages[-1]["content"] == "Fixed: the linker flag was missing."
    assert "marker-round-3" not in json.dumps(messages[2:])
    assert [row["kept"] for row in outcome["round_table"]] == [False] * 9 + [True] * 2
    assert {row["turn"] for row in outcome["round_table"]} == {1}


def test_every_kept_result_has_its_call(tmp_path: Path) -> None:
    for keep in range(0, 6):
        outcome = compact_session(
            write_chat(tmp_path, one_turn(5)), keep_rounds=keep, dry_run=True
        ).as_json()
        assert outcome["kept_rounds"] == keep
    outcome = compact_session(write_chat(tmp_path, one_turn(5)), keep_rounds=3).as_json()
    messages = fork_messages(outcome)
    calls = [c["id"] for m in messages for c in m.get("tool_calls") or []]
    assert results_in(messages) == calls == ["call_4", "call_5"]


def test_a_round_waiting_for_its_results_is_kept_whole(tmp_path: Path) -> None:
    outcome = compact_session(
        write_chat(tmp_path, one_turn(6, open_last=True)), keep_rounds=0
    ).as_json()
    assert outcome["kept_rounds"] == 1 and outcome["kept_request"]
    messages = fork_messages(outcome)
    assert messages[2]["content"] == REQUEST
    assert [c["id"] for c in messages[-1]["tool_calls"]] == ["call_6"]


def test_before_addresses_rounds(tmp_path: Path) -> None:
    path = write_chat(tmp_path, one_turn(8))
    outcome = compact_session(path, before=7, dry_run=True).as_json()
    assert (outcome["summarised_rounds"], outcome["kept_rounds"]) == (6, 3)
    with pytest.raises(CtxtopError, match="--before must be a round from 2 to 10"):
        compact_session(path, before=11, dry_run=True).as_json()


def test_nothing_to_compact_counts_rounds_in_words(tmp_path: Path) -> None:
    messages = [{"role": "user", "content": REQUEST}, {"role": "assistant", "content": "Done."}]
    with pytest.raises(CtxtopError, match="1 round since the last summary, and it is kept"):
        compact_session(write_chat(tmp_path, messages), dry_run=True).as_json()


def test_the_text_output_shows_which_rounds_of_which_turn_go(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    messages = [
        *one_turn(6),
        {"role": "user", "content": "Now run the tests."},
        {"role": "assistant", "content": "Running.", "tool_calls": [call(7)]},
        {"role": "tool", "tool_call_id": "call_7", "content": "3 passed"},
        {"role": "assistant", "content": "All pass."},
    ]
    assert (
        main(["compact", str(write_chat(tmp_path, messages)), "--dry-run", "--keep-rounds", "4"])
        == 0
    )
    out = capsys.readouterr().out
    assert "5 rounds summarised, 4 kept verbatim" in out
    assert f'turn 1: "{REQUEST}"' in out
    assert "  rounds 1–5 summarised (Bash ×5;" in out
    assert "  rounds 6–7 kept verbatim (Bash;" in out
    assert 'turn 2: "Now run the tests."' in out and "  rounds 8–9 kept verbatim (Bash;" in out


def test_a_turn_cut_in_the_middle_is_not_called_answered(tmp_path: Path) -> None:
    """What the assistant said before the cut is progress on the request, not its answer."""
    messages = one_turn(6, answered=False)
    messages.insert(4, {"role": "assistant", "content": "Next, part 2."})
    outcome = compact_session(write_chat(tmp_path, messages), keep_rounds=2, dry_run=True).as_json()
    assert outcome["kept_request"]
    assert "Requests answered: 0 of 1" in outcome["summary"]
    assert "Answer to request 1" not in outcome["summary"]
    whole = compact_session(
        write_chat(tmp_path, one_turn(6)), keep_rounds=0, dry_run=True
    ).as_json()
    assert "Requests answered: 1 of 1" in whole["summary"]

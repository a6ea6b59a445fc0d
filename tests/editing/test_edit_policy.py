"""Editing policies on a session built here: what is cleared, what is kept, and why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.editing.policy import Policy
from engine.forks.edit import edit_session


def _turn(n: int, tool: str, size: int, result: bool = True) -> list[dict[str, Any]]:
    call = f"call_{n}"
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": f"question {n}"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call,
                    "type": "function",
                    "function": {"name": tool, "arguments": json.dumps({"path": f"f{n}.py"})},
                }
            ],
        },
    ]
    if result:
        body = "\n".join(f"line {n}.{i} of the file" for i in range(size))
        messages.append({"role": "tool", "tool_call_id": call, "content": body})
        messages.append({"role": "assistant", "content": f"answer {n}"})
    return messages


def _session(tmp_path: Path, turns: list[list[dict[str, Any]]]) -> Path:
    path = tmp_path / "chat.json"
    messages = [m for turn in turns for m in turn]
    path.write_text(json.dumps({"model": "gpt-4o", "messages": messages}), encoding="utf-8")
    return path


def _cleared(outcome: dict[str, Any]) -> list[str]:
    return [change["tool_call_id"] for change in outcome["changed"]]


def test_keep_cycles_keeps_the_last_turns_whole(tmp_path: Path) -> None:
    path = _session(tmp_path, [_turn(i, "read_file", 20) for i in range(1, 6)])
    outcome = edit_session(path, Policy(keep_cycles=2), dry_run=True).as_json()
    assert _cleared(outcome) == ["call_1", "call_2", "call_3"]
    assert outcome["fork"] is None


def test_keep_tool_uses_and_excluded_tools(tmp_path: Path) -> None:
    turns = [_turn(1, "read_file", 20), _turn(2, "memory_view", 20), _turn(3, "grep", 20)]
    turns += [_turn(4, "read_file", 20)]
    path = _session(tmp_path, turns)
    outcome = edit_session(path, Policy(keep_cycles=0, keep_tool_uses=1), dry_run=True).as_json()
    assert _cleared(outcome) == ["call_1", "call_3"]  # memory tools are excluded by default
    outcome = edit_session(path, Policy(keep_cycles=0, exclude=("GREP",)), dry_run=True).as_json()
    assert _cleared(outcome) == ["call_1", "call_2", "call_4"]


def test_a_cycle_in_progress_is_never_cut(tmp_path: Path) -> None:
    turns = [
        _turn(1, "read_file", 20),
        [*_turn(2, "read_file", 20), *_turn(3, "shell", 5, False)[1:]],
    ]
    path = _session(tmp_path, turns)
    outcome = edit_session(path, Policy(keep_cycles=0), dry_run=True).as_json()
    assert _cleared(outcome) == ["call_1"]


def test_min_tokens_and_order(tmp_path: Path) -> None:
    path = _session(tmp_path, [_turn(1, "a", 5), _turn(2, "b", 50), _turn(3, "c", 20)])
    everything = edit_session(path, Policy(keep_cycles=0), dry_run=True).as_json()
    saved = {
        c["tool_call_id"]: c["tokens_before"] - c["tokens_after"] for c in everything["changed"]
    }
    assert saved["call_2"] > saved["call_3"] > saved["call_1"]
    largest = edit_session(
        path, Policy(keep_cycles=0, order="largest", target_tokens=saved["call_2"]), dry_run=True
    ).as_json()
    assert _cleared(largest) == ["call_2"]
    oldest = edit_session(
        path, Policy(keep_cycles=0, order="oldest", target_tokens=saved["call_1"] + 1), dry_run=True
    ).as_json()
    assert _cleared(oldest) == ["call_1", "call_2"]
    total = sum(saved.values())
    nothing = edit_session(
        path, Policy(keep_cycles=0, min_tokens=total + 1), dry_run=True
    ).as_json()
    assert nothing["changed"] == [] and nothing["below_minimum"] == total
    assert nothing["tokens_after"] == nothing["tokens_before"]


def _topic_turn(n: int, topic: str) -> list[dict[str, Any]]:
    turn = _turn(n, "read_file", 0)
    turn[2]["content"] = "\n".join(f"{topic} detail {i}" for i in range(40))
    return turn


@pytest.mark.parametrize(
    ("question", "cleared_first"),
    [
        ("Now add the postgres migration for the orders schema", "call_2"),
        ("Now make the stylesheet colours darker in the navbar", "call_1"),
    ],
)
def test_relevance_order_clears_what_the_recent_conversation_is_not_about(
    tmp_path: Path, question: str, cleared_first: str
) -> None:
    turns = [
        _topic_turn(1, "postgres migration orders schema table column index"),
        _topic_turn(2, "stylesheet navbar colours css palette darker theme"),
        [{"role": "user", "content": question}],
    ]
    path = _session(tmp_path, turns)
    every = edit_session(path, Policy(keep_cycles=0, order="relevance"), dry_run=True).as_json()
    assert _cleared(every)[0] == cleared_first and len(_cleared(every)) == 2
    one = every["changed"][0]["tokens_before"] - every["changed"][0]["tokens_after"]
    outcome = edit_session(
        path, Policy(keep_cycles=0, order="relevance", target_tokens=one), dry_run=True
    ).as_json()
    assert _cleared(outcome) == [cleared_first]


def test_placeholder_names_the_file_or_the_command(tmp_path: Path) -> None:
    turns = [_turn(1, "read_file", 20), _turn(2, "shell", 20), _turn(3, "x", 1)]
    turns[1][1]["tool_calls"][0]["function"]["arguments"] = json.dumps({"command": "make test"})
    path = _session(tmp_path, turns)
    outcome = edit_session(path, Policy(keep_cycles=1)).as_json()
    fork = json.loads(Path(outcome["fork"]).read_text(encoding="utf-8"))
    results = {m["tool_call_id"]: m["content"] for m in fork["messages"] if m["role"] == "tool"}
    assert "read the file f1.py" in results["call_1"]
    assert "run the command again: make test" in results["call_2"]
    assert results["call_3"] == "line 3.0 of the file"

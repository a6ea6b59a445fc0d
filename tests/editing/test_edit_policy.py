"""Editing policies on a session built here: what is cleared, what is kept, and why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks.edit import edit_session


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
    outcome = edit_session(path, Policy(keep_turns=2), dry_run=True).as_json()
    assert _cleared(outcome) == ["call_1", "call_2", "call_3"]
    assert outcome["fork"] is None


def test_keep_tool_uses_and_excluded_tools(tmp_path: Path) -> None:
    turns = [_turn(1, "read_file", 20), _turn(2, "memory_view", 20), _turn(3, "grep", 20)]
    turns += [_turn(4, "read_file", 20)]
    path = _session(tmp_path, turns)
    outcome = edit_session(path, Policy(keep_turns=0, keep_tool_uses=1), dry_run=True).as_json()
    assert _cleared(outcome) == ["call_1", "call_3"]  # memory tools are excluded by default
    outcome = edit_session(path, Policy(keep_turns=0, exclude=("GREP",)), dry_run=True).as_json()
    assert _cleared(outcome) == ["call_1", "call_2", "call_4"]


def test_a_cycle_in_progress_is_never_cut(tmp_path: Path) -> None:
    turns = [
        _turn(1, "read_file", 20),
        [*_turn(2, "read_file", 20), *_turn(3, "shell", 5, False)[1:]],
    ]
    path = _session(tmp_path, turns)
    outcome = edit_session(path, Policy(keep_turns=0), dry_run=True).as_json()
    assert _cleared(outcome) == ["call_1"]


def test_min_tokens_and_order(tmp_path: Path) -> None:
    path = _session(tmp_path, [_turn(1, "a", 8), _turn(2, "b", 50), _turn(3, "c", 20)])
    everything = edit_session(path, Policy(keep_turns=0), dry_run=True).as_json()
    saved = {
        c["tool_call_id"]: c["tokens_before"] - c["tokens_after"] for c in everything["changed"]
    }
    assert saved["call_2"] > saved["call_3"] > saved["call_1"]
    largest = edit_session(
        path, Policy(keep_turns=0, order="largest", target_tokens=saved["call_2"]), dry_run=True
    ).as_json()
    assert _cleared(largest) == ["call_2"]
    oldest = edit_session(
        path, Policy(keep_turns=0, order="oldest", target_tokens=saved["call_1"] + 1), dry_run=True
    ).as_json()
    assert _cleared(oldest) == ["call_1", "call_2"]
    total = sum(saved.values())
    nothing = edit_session(path, Policy(keep_turns=0, min_tokens=total + 1), dry_run=True).as_json()
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
    every = edit_session(path, Policy(keep_turns=0, order="relevance"), dry_run=True).as_json()
    assert _cleared(every)[0] == cleared_first and len(_cleared(every)) == 2
    one = every["changed"][0]["tokens_before"] - every["changed"][0]["tokens_after"]
    outcome = edit_session(
        path, Policy(keep_turns=0, order="relevance", target_tokens=one), dry_run=True
    ).as_json()
    assert _cleared(outcome) == [cleared_first]


def test_placeholder_names_the_file_or_the_command(tmp_path: Path) -> None:
    turns = [_turn(1, "read_file", 20), _turn(2, "shell", 20), _turn(3, "x", 1)]
    turns[1][1]["tool_calls"][0]["function"]["arguments"] = json.dumps({"command": "git log -3"})
    path = _session(tmp_path, turns)
    outcome = edit_session(path, Policy(keep_turns=1)).as_json()
    fork = json.loads(Path(outcome["fork"]).read_text(encoding="utf-8"))
    results = {m["tool_call_id"]: m["content"] for m in fork["messages"] if m["role"] == "tool"}
    assert "read the file f1.py" in results["call_1"]
    assert "run the command again: git log -3" in results["call_2"]
    assert results["call_3"] == "line 3.0 of the file"


def _cleared_results(tmp_path: Path, calls: list[tuple[str, dict[str, Any], int]]) -> list[str]:
    """The placeholders an edit that keeps only the last turn writes for ``calls`` (tool,
    input, result lines), one turn each."""
    turns = [_turn(n, tool, size) for n, (tool, _, size) in enumerate(calls, 1)]
    for turn, (_, arguments, _) in zip(turns, calls, strict=True):
        turn[1]["tool_calls"][0]["function"]["arguments"] = json.dumps(arguments)
    path = _session(tmp_path, [*turns, _turn(len(calls) + 1, "x", 1)])
    outcome = edit_session(path, Policy(keep_turns=1)).as_json()
    fork = json.loads(Path(outcome["fork"]).read_text(encoding="utf-8"))
    results = {m["tool_call_id"]: m["content"] for m in fork["messages"] if m["role"] == "tool"}
    return [results[f"call_{n}"] for n in range(1, len(calls) + 1)]


def test_placeholders_never_tell_the_model_to_repeat_what_changed_something(
    tmp_path: Path,
) -> None:
    """A cleared Task (it started an agent that created a project) used to say "To see it
    again, call Task again with the same input"; a build, a write, a todo list likewise. Only
    reads, searches and listings are offered again; the rest say what they were about."""
    calls: list[tuple[str, dict[str, Any], int]] = [
        ("Task", {"description": "Create the project", "prompt": "scaffold it"}, 40),
        ("TodoWrite", {"todos": [{"content": "write tests", "status": "pending"}]}, 40),
        ("Write", {"file_path": "/src/app.py", "content": "print(1)"}, 40),
        ("Bash", {"command": "npm install && npm test"}, 40),
        ("Bash", {"command": "cat notes.txt > copy.txt"}, 40),
        ("shell", {"command": ["bash", "-lc", "rg TODO src | head -5"]}, 40),
        ("Grep", {"pattern": "TODO", "path": "src"}, 40),
        ("WebSearch", {"query": "textual scroll"}, 40),
    ]
    task, todo, write, build, redirect, search, grep, web = _cleared_results(tmp_path, calls)
    for text, tool in ((task, "Task"), (todo, "TodoWrite"), (write, "Write"), (build, "Bash")):
        assert "To see it again" not in text and f"Do not call {tool} again" in text
    assert "the result of Task (description: Create the project)" in task
    assert "the result of Write on /src/app.py" in write
    assert "the result of Bash: npm install && npm test" in build
    assert "Do not call Bash again" in redirect  # a redirection writes: not a read
    assert "To see it again, run the command again: rg TODO src | head -5" in search
    assert "To see it again, read the file src again." in grep
    assert "To see it again, call WebSearch again with the same input." in web


def test_a_result_that_would_save_a_few_tokens_is_left(tmp_path: Path) -> None:
    """A one-line result (a TodoWrite's "Todos have been modified") saved a token or two for the
    price of a cache rewrite: below the policy's minimum saving per result, it stays."""
    turns = [_turn(1, "TodoWrite", 1), _turn(2, "read_file", 4), _turn(3, "x", 1)]
    path = _session(tmp_path, turns)
    outcome = edit_session(path, Policy(keep_turns=1), dry_run=True).as_json()
    assert outcome["changed"] == []
    assert outcome["policy"]["min_result_tokens"] == 10
    assert "saving under 10 tokens each as a placeholder" in outcome["nothing_to_clear"]["message"]
    relaxed = edit_session(path, Policy(keep_turns=1, min_result_tokens=1), dry_run=True)
    saved = [c["tokens_before"] - c["tokens_after"] for c in relaxed.as_json()["changed"]]
    assert saved and all(0 < tokens < 10 for tokens in saved)  # what the minimum keeps

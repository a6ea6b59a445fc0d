"""Exact mode against prompt-tsx mode: each library quirk that exact mode corrects, both outputs.

Every test renders the same tree in both modes and asserts what each sends, so a change to either
mode shows up here. The list of differences is docs/render.md "exact mode".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxtop.engine.render.loader import document_from_data
from ctxtop.engine.render.output import result_json
from ctxtop.engine.render.renderer import render
from ctxtop.engine.render.tokenizers import get_tokenizer

EXAMPLES = Path(__file__).parent / "examples"


def both(tree: Any, budget: int, tokenizer: str = "words") -> tuple[dict[str, Any], ...]:
    return tuple(
        result_json(render(document_from_data(json.loads(json.dumps(tree))), budget, tokenizer, m))
        for m in ("prompt-tsx", "exact")
    )


def example(name: str) -> Any:
    return json.loads((EXAMPLES / f"{name}.json").read_text())


def user(*children: Any) -> list[dict[str, Any]]:
    """A tree of one user message, id "u"."""
    return [{"type": "user", "id": "u", "children": list(children)}]


def token_limit(limit_id: str, max_tokens: int, *children: Any) -> dict[str, Any]:
    return {"type": "tokenlimit", "id": limit_id, "max": max_tokens, "children": list(children)}


def texts(result: dict[str, Any]) -> list[str]:
    return [message["text"] for message in result["messages"]]


def real_count(result: dict[str, Any], tokenizer: str = "words") -> int:
    """What the sent messages really cost: the tokenizer over each emitted message."""
    counter = get_tokenizer(tokenizer)
    total = 0
    for message in result["messages"]:
        raw: dict[str, Any] = {
            "role": ("system", "user", "assistant", "tool").index(message["role"]),
            "content": [{"type": 1, "text": p["text"]} for p in message["content"]],
        }
        if "name" in message:
            raw["name"] = message["name"]
        if "toolCalls" in message:
            raw["toolCalls"] = [
                {"function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in message["toolCalls"]
            ]
        if "toolCallId" in message:
            raw["toolCallId"] = message["toolCallId"]
        total += counter.message_tokens(raw)
    return total


def test_dropped_tool_call_is_recounted() -> None:
    # The library keeps the assistant message's old count after its tool call is dropped.
    tsx, exact = both(example("13-stale-toolcall-count"), 30)
    assert texts(tsx) == texts(exact) == ["I will call tools now.", "result two"]
    assert tsx["tokenCount"] == 25 and real_count(tsx) == 19
    assert exact["tokenCount"] == real_count(exact) == 19


def test_stale_count_no_longer_prunes_what_fits() -> None:
    tsx, exact = both(example("13-stale-toolcall-count"), 18)
    assert tsx["messages"] == [] and tsx["tokenCount"] == 0
    assert texts(exact) == ["I will call tools now."]
    assert exact["tokenCount"] == real_count(exact) == 8
    assert "toolCalls" not in exact["messages"][0]  # both calls went with their results


def test_empty_message_costs_nothing() -> None:
    # A whitespace-only user message is not sent; the library still counts its 3 base tokens.
    tsx, exact = both(example("01-basic-messages"), 1000)
    assert texts(tsx) == texts(exact)
    assert tsx["tokenCount"] == 41
    assert exact["tokenCount"] == real_count(exact) == 38


def test_tool_message_base_tokens_come_off_its_budget() -> None:
    tree = [
        {
            "type": "tool",
            "id": "t",
            "toolCallId": "c1",
            "children": [{"type": "echo", "id": "e", "label": "e"}],
        }
    ]
    tsx, exact = both(tree, 20)
    assert texts(tsx) == ["e=20"]  # the library treats a ToolMessage as having no overhead
    assert texts(exact) == ["e=16"]  # 3 per message + 1 for the tool call id (words)


def test_tokenlimit_inside_a_message_is_measured_exactly() -> None:
    tree = user(
        token_limit(
            "lim",
            4,
            {"type": "textchunk", "id": "a", "priority": 1, "text": "one two"},
            {"type": "textchunk", "id": "b", "priority": 2, "text": "three four"},
        )
    )
    tsx, exact = both(tree, 100)
    # four words fit a limit of 4; the library adds one token per line start and prunes "a"
    assert texts(tsx) == ["three four"] and tsx["pruned"] == ["a"]
    assert texts(exact) == ["one two\nthree four"] and exact["pruned"] == []


def test_blocked_subtree_does_not_stop_pruning() -> None:
    # The lowest-priority message is protected by its cache breakpoint; the library gives up,
    # exact mode prunes the next candidates instead.
    tsx, exact = both(example("10-cache-breakpoint"), 14)
    assert tsx["error"]["type"] == "BudgetExceededError"
    assert "messages" not in tsx
    assert texts(exact) == ["stable system prompt text", "old turn one"]
    assert exact["pruned"] == ["h2", "h3", "q"]
    assert exact["tokenCount"] == 13


def test_nothing_prunable_is_still_an_error_in_exact_mode() -> None:
    tsx, exact = both(example("10-cache-breakpoint"), 12)
    assert tsx["error"]["type"] == exact["error"]["type"] == "BudgetExceededError"
    assert exact["error"]["message"] == "No lowest priority node found (path: Root)"


def test_grown_expandable_stays_inside_its_token_limit() -> None:
    tree = user(
        token_limit(
            "lim",
            8,
            {"type": "expandable", "id": "x", "text": " ".join(f"w{i}" for i in range(1, 17))},
        ),
        {"type": "textchunk", "id": "q", "text": "question"},
    )
    tsx, exact = both(tree, 14)
    # grown twice (for the limit, then for the whole prompt): 10 words in a limit of 8
    assert texts(tsx) == ["w1 w2 w3 w4 w5 w6 w7 w8 w9 w10\nquestion"]
    grown = texts(exact)[0].split("\n")[0].split()
    assert len(grown) <= 8
    assert exact["tokenCount"] <= 14


def test_grown_expandable_keeps_its_priority() -> None:
    expandable = {
        "type": "expandable",
        "id": "x",
        "priority": 0,
        "text": " ".join(f"x{i}" for i in range(1, 11)),
    }
    tree = user(
        token_limit(
            "outer",
            6,
            token_limit(
                "inner",
                12,
                expandable,
                {"type": "textchunk", "id": "s", "priority": 3, "text": "s1 s2"},
            ),
        )
    )
    tsx, exact = both(tree, 100)
    # the library's regrown text has the top priority and an upper-bound count: all is pruned
    assert tsx["messages"] == [] and "s" in tsx["pruned"]
    assert texts(exact) == ["x1 x2 x3 x4\ns1 s2"]
    assert exact["pruned"] == []


def test_modes_agree_when_no_quirk_is_involved() -> None:
    for budget in (40, 30, 25, 18, 12, 6):
        tsx, exact = both(example("02-priority-pruning"), budget)
        assert tsx == exact, budget

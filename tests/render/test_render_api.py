"""The Python API builds the same trees as the JSON format and renders them the same way."""

from __future__ import annotations

import json
from pathlib import Path

from ctxtop.engine.render.elements import (
    Child,
    Sizing,
    ToolCall,
    assistant,
    br,
    cache_breakpoint,
    elem,
    expandable,
    if_empty,
    image,
    keep_with,
    opaque,
    system,
    text_chunk,
    tool,
    user,
)
from ctxtop.engine.render.loader import document_from_data
from ctxtop.engine.render.output import result_json
from ctxtop.engine.render.renderer import render

EXAMPLES = Path(__file__).parent / "examples"


def keepwith_example_in_python() -> list[Child]:
    return [
        system("You can call tools.", id="sys"),
        user("Find the answer.", id="q"),
        assistant(
            tool_calls=[
                ToolCall("call_1", "search", '{"q": "alpha"}', keep_with="r1"),
                ToolCall("call_2", "read_file", '{"path": "a.txt"}', keep_with="r2"),
            ],
            id="call",
        ),
        tool(
            keep_with(
                text_chunk("search results: alpha beta gamma delta epsilon", id="r1text"),
                group="r1",
                priority=1,
                id="kw1",
            ),
            tool_call_id="call_1",
            id="res1",
        ),
        tool(
            keep_with(
                text_chunk("file a.txt contents", id="r2text"), group="r2", priority=2, id="kw2"
            ),
            tool_call_id="call_2",
            id="res2",
        ),
        assistant("Done.", id="final"),
    ]


def test_python_tree_renders_like_the_json_example() -> None:
    data = json.loads((EXAMPLES / "07-keepwith-toolcalls.json").read_text())
    for budget in data["checkBudgets"][1:]:
        for mode in ("prompt-tsx", "exact"):
            from_json = render(document_from_data(data), budget, "words", mode)
            from_python = render(keepwith_example_in_python(), budget, "words", mode)
            assert result_json(from_python) == result_json(from_json), (budget, mode)


def test_expandable_callable_is_called_with_its_budgets() -> None:
    seen: list[float] = []

    def numbers(sizing: Sizing) -> str:
        seen.append(sizing.token_budget)
        out: list[str] = []
        while sizing.count_tokens(" ".join([*out, "n"])) <= sizing.token_budget:
            out.append("n")
        return " ".join(out)

    tree = [
        user(
            text_chunk("fixed words here", id="fixed"),
            expandable(numbers, id="grow"),
            id="u",
        )
    ]
    result = render(tree, 20, "words", "exact")
    assert [call["budget"] for call in result.expandable_calls] == seen
    assert len(seen) == 2  # first render, then grown into the room left
    assert result.token_count == 20
    assert result.messages is not None
    assert result.messages[0]["content"][0]["text"].startswith("fixed words here\nn n")


def test_parts_line_breaks_and_breakpoints_from_python() -> None:
    tree = [
        user(
            "look",
            br(),
            "here",
            image("iVBORw0KGgo", detail="low", id="img"),
            opaque({"kind": "x"}, token_usage=4, priority=0),
            cache_breakpoint("ephemeral"),
            if_empty(elem(" ", id="blank"), alt=["nothing found"], id="fallback"),
            id="u",
        )
    ]
    result = result_json(render(tree, 100, "words", "prompt-tsx"))
    (message,) = result["messages"]
    assert [part["type"] for part in message["content"]] == [
        "text",
        "image",
        "opaque",
        "cacheBreakpoint",
        "text",
    ]
    assert message["content"][0]["text"] == "look\nhere"
    assert message["content"][1]["url"] == "data:image/png;base64,iVBORw0KGgo"
    assert message["content"][4]["text"] == "nothing found"
    assert result["absent"] == ["blank"]

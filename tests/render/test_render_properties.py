"""Property tests of exact mode on random prompt trees (hypothesis).

Whatever the tree and budget, a successful exact-mode render
* never exceeds the budget, and its token count is what the sent messages really cost;
* never keeps a lower-priority sibling while pruning a higher one for priority;
* never splits a keep-with group (all its containers stay or all go; a call goes with them);
* never removes content placed before a cache breakpoint.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxtop.engine.render import renderer
from ctxtop.engine.render.element_report import build_report
from ctxtop.engine.render.loader import document_from_data
from ctxtop.engine.render.materialized import Branch, Message, Node
from ctxtop.engine.render.openai_form import to_openai_message
from ctxtop.engine.render.output import dumps, json_line, result_json
from ctxtop.engine.render.renderer import RenderResult, render
from ctxtop.engine.render.tokenizers import get_tokenizer

VOCAB = ["alpha", "beta", "gamma", "code", "file", "x", "{", "}", "fn()", "token", "é"]
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

words = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=6).map(" ".join)
priority = st.one_of(st.none(), st.integers(0, 6))


def _with_priority(node: dict[str, Any], value: int | None) -> dict[str, Any]:
    if value is not None:
        node["priority"] = value
    return node


text_chunk = st.builds(
    lambda text, p, ws: _with_priority(
        {"type": "textchunk", "text": text, **({"breakOnWhitespace": True} if ws else {})}, p
    ),
    words,
    priority,
    st.booleans(),
)
content = st.recursive(
    st.one_of(text_chunk, words),
    lambda inner: st.builds(
        lambda kind, children, p: _with_priority({"type": kind, "children": children}, p),
        st.sampled_from(["elem", "elem", "chunk"]),
        st.lists(inner, min_size=0, max_size=3),
        priority,
    ),
    max_leaves=6,
)


@st.composite
def message(draw: st.DrawFn, cache: bool = False, wide: bool = False) -> dict[str, Any]:
    role = draw(st.sampled_from(["system", "user", "user", "assistant"]))
    children: list[Any] = draw(st.lists(content, min_size=0, max_size=12 if wide else 4))
    if cache and draw(st.integers(0, 3)) == 0:
        children.insert(draw(st.integers(0, len(children))), {"type": "cacheBreakpoint"})
    return _with_priority({"type": role, "children": children}, draw(priority))


@st.composite
def tool_round(draw: st.DrawFn, index: int) -> list[dict[str, Any]]:
    calls = draw(st.integers(1, 2))
    group = [f"g{index}.{k}" for k in range(calls)]
    assistant: dict[str, Any] = {
        "type": "assistant",
        "toolCalls": [
            {"id": f"c{index}.{k}", "name": "read", "arguments": "{}", "keepWith": group[k]}
            for k in range(calls)
        ],
        "children": draw(st.lists(text_chunk, max_size=2)),
    }
    results = [
        _with_priority(
            {
                "type": "tool",
                "toolCallId": f"c{index}.{k}",
                "children": [
                    _with_priority(
                        {
                            "type": "keepwith",
                            "group": group[k],
                            "children": draw(st.lists(content, min_size=1, max_size=3)),
                        },
                        draw(priority),
                    )
                ],
            },
            draw(priority),
        )
        for k in range(calls)
    ]
    return [_with_priority(assistant, draw(priority)), *results]


@st.composite
def tree(
    draw: st.DrawFn, tools: bool = False, cache: bool = False, wide: bool = False
) -> list[Any]:
    root: list[Any] = []
    for index in range(draw(st.integers(1, 12 if wide else 5))):
        if tools and draw(st.booleans()):
            root.extend(draw(tool_round(index)))
        else:
            item = draw(message(cache=cache, wide=wide))
            if draw(st.integers(0, 4)) == 0:
                item = _with_priority({"type": "elem", "children": [item]}, draw(priority))
            root.append(item)
    return root


def exact(nodes: list[Any], budget: int) -> RenderResult:
    return render(document_from_data({"root": nodes}), budget, "words", "exact")


def _preorder(node: Node) -> list[Node]:
    out: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        out.append(current)
        if isinstance(current, Branch):
            stack.extend(reversed(current.children))
    return out


def _final_ids(result: RenderResult) -> set[str]:
    assert result.final_tree is not None
    return {n.json_id for n in _preorder(result.final_tree) if n.json_id is not None}


@SETTINGS
@given(tree(tools=True, cache=True), st.integers(0, 120))
def test_never_over_budget_and_count_is_real(nodes: list[Any], budget: int) -> None:
    result = exact(nodes, budget)
    if result.error is not None:
        assert result.error.type == "BudgetExceededError"
        return
    assert result.messages is not None
    real = sum(get_tokenizer("words").message_tokens(m) for m in result.messages)
    assert result.token_count == real
    assert real <= budget


@SETTINGS
@given(tree(), st.integers(0, 120))
def test_never_keeps_lower_priority_sibling_over_higher(nodes: list[Any], budget: int) -> None:
    result = exact(nodes, budget)
    if result.error is not None:
        return
    assert result.initial_tree_factory is not None
    reasons = {row.id: row.reason for row in build_report(result).elements if row.pruned}
    kept = _final_ids(result)
    for parent in _preorder(result.initial_tree_factory()):
        if not isinstance(parent, Branch):
            continue
        siblings = [c for c in parent.children if c.json_id is not None]
        for dropped in siblings:
            if reasons.get(dropped.json_id) != "priority":
                continue
            for other in siblings:
                if other.json_id in kept:
                    assert not other.priority < dropped.priority, (other.json_id, dropped.json_id)


@SETTINGS
@given(tree(tools=True), st.integers(0, 150))
def test_never_splits_a_keep_with_group(nodes: list[Any], budget: int) -> None:
    result = exact(nodes, budget)
    if result.error is not None:
        return
    assert result.initial_tree_factory is not None and result.final_tree is not None
    groups: dict[int, list[str]] = {}
    for node in _preorder(result.initial_tree_factory()):
        group = getattr(node, "keep_with_id", None)
        if group is not None and node.json_id is not None:
            groups.setdefault(group, []).append(node.json_id)
    kept = _final_ids(result)
    alive = {group for group, ids in groups.items() if all(i in kept for i in ids)}
    for ids in groups.values():
        assert all(i in kept for i in ids) or not any(i in kept for i in ids)
    for node in _preorder(result.final_tree):
        if isinstance(node, Message) and node.tool_calls:
            for call in node.tool_calls:
                assert call["keepWith"] in alive


@SETTINGS
@given(tree(cache=True), st.integers(0, 120))
def test_never_removes_content_before_a_cache_breakpoint(nodes: list[Any], budget: int) -> None:
    result = exact(nodes, budget)
    if result.error is not None:
        return
    assert result.initial_tree_factory is not None
    order = _preorder(result.initial_tree_factory())
    breakpoints = [i for i, n in enumerate(order) if n.kind == 4]  # BREAKPOINT
    if not breakpoints:
        return
    last = breakpoints[-1]
    protected = set()
    for position, node in enumerate(order[:last]):
        subtree_end = position + len(_preorder(node))
        if subtree_end <= last and node.json_id is not None:
            protected.add(node.json_id)
    assert protected <= _final_ids(result)


@SETTINGS
@given(
    tree(tools=True, cache=True, wide=True),
    st.integers(0, 300),
    st.sampled_from(["prompt-tsx", "exact"]),
)
def test_indexes_prune_exactly_like_the_literal_scans(
    nodes: list[Any], budget: int, mode: str
) -> None:
    # The candidate heaps (levels of 8 or more children, hence the wide trees) and the
    # keep-with index are speed-ups of the library's scans and walks.
    document = document_from_data({"root": nodes})
    fast = render(document, budget, "words", mode)
    slow = render(document, budget, "words", mode, indexed=False)
    assert result_json(fast) == result_json(slow)
    assert [(n.json_id, why) for n, why, _ in fast.removals] == [
        (n.json_id, why) for n, why, _ in slow.removals
    ]


@SETTINGS
@given(tree(tools=True, wide=True), st.integers(0, 300), st.sampled_from(["words", "o200k"]))
def test_exact_mode_removes_no_more_than_a_recount_after_every_removal(
    nodes: list[Any], budget: int, tokenizer: str
) -> None:
    # Exact mode batches removals while the estimate is far above the budget; recounting
    # after every single removal must not find a shorter sequence of removals.
    document = document_from_data({"root": nodes})
    batched = render(document, budget, tokenizer, "exact")
    margin = renderer.PRECISE_MARGIN
    renderer.PRECISE_MARGIN = math.inf  # every removal is followed by a precise count
    try:
        one_by_one = render(document, budget, tokenizer, "exact")
    finally:
        renderer.PRECISE_MARGIN = margin
    assert result_json(batched) == result_json(one_by_one)


def _format_md_count(value: Any, key: object = None) -> int:
    """ptsx-oracle FORMAT.md's rule for an OpenAI-form message: the o200k tokens of every
    non-empty string, plus one per non-empty ``name`` key, at any depth (without the 3)."""
    if value is None or value is False or value == "" or value == 0:
        return 0
    tokens = 1 if key == "name" else 0
    if isinstance(value, str):
        return tokens + get_tokenizer("o200k").text_tokens(value)
    if isinstance(value, dict):
        tokens += sum(_format_md_count(item, inner) for inner, item in value.items())
    elif isinstance(value, list):
        tokens += sum(_format_md_count(item) for item in value)
    return tokens


maybe_text = st.one_of(st.none(), st.just(""), words, st.integers(0, 3))


@SETTINGS
@given(
    st.lists(st.tuples(maybe_text, maybe_text, maybe_text), max_size=3),
    st.one_of(st.none(), st.just(""), words),
    words,
)
def test_tool_calling_message_costs_what_format_md_says(
    calls: list[tuple[Any, Any, Any]], name: Any, text: str
) -> None:
    # Assistant messages with tool calls are counted without the generic walk (agent trees
    # are mostly such messages); odd call fields (None, "", numbers) must cost the same.
    message: dict[str, Any] = {
        "role": 2,
        "content": [{"type": 1, "text": text}],
        "toolCalls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in calls
        ],
    }
    if name is not None:
        message["name"] = name
    openai = to_openai_message(message)
    expected = 3 + _format_md_count(openai)
    assert get_tokenizer("o200k").message_tokens(message) == expected


@SETTINGS
@given(
    st.sampled_from([0, 1, 3, 4]),
    st.lists(words, max_size=3),
    st.one_of(st.none(), st.just(""), words, st.integers(0, 3)),
    st.one_of(st.none(), st.just(""), words, st.integers(0, 3)),
)
def test_text_message_costs_what_format_md_says(
    role: int, texts: list[str], name: Any, call_id: Any
) -> None:
    # System, user and tool messages of text parts are counted without building their OpenAI
    # form; names and call ids of any JSON type, and a role past tool, must cost the same.
    message: dict[str, Any] = {"role": role, "content": [{"type": 1, "text": t} for t in texts]}
    if name is not None:
        message["name"] = name
    if call_id is not None:
        message["toolCallId"] = call_id
    expected = 3 + _format_md_count(to_openai_message(message))
    assert get_tokenizer("o200k").message_tokens(message) == expected


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e-07, 1e21, 1e16, 0.00001, 2.0, -0.0]),
    st.text(),  # control characters, non-ASCII, astral and lone surrogates included
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=5), st.integers(0, 9)), inner, max_size=4),
    ),
    max_leaves=12,
)


@SETTINGS
@given(json_values)
def test_a_result_line_is_written_as_json_dumps_writes_it(value: Any) -> None:
    # `ctxtop render --jsonl` writes its lines with msgspec where that is the same text;
    # floats (1e-07, NaN), number keys and lone surrogates must come out as before.
    try:
        expected: str | None = dumps(value, normalized=True)
    except (ValueError, TypeError):
        expected = None  # what json.dumps cannot write, json_line cannot either
    if expected is None:
        with pytest.raises((ValueError, TypeError)):
            json_line(value)
    else:
        assert json_line(value) == expected

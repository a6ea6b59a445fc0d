"""The analysis parts on small inputs whose answers are worked out by hand in the test."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest

from ctxtop.engine.analysis.accuracy import RequestPoint, accuracy
from ctxtop.engine.analysis.forecast import forecast
from ctxtop.engine.analysis.json_audit import compact_json
from ctxtop.engine.analysis.profiles import CacheSpec, Profile, SectionSpec
from ctxtop.engine.analysis.relevance import Scorer, TermCache, terms
from ctxtop.engine.analysis.render_tree import (
    PromptTree,
    Rendered,
    build_tree,
    prompt_nodes,
    render_tree,
)
from ctxtop.engine.analysis.sections import content_names
from ctxtop.engine.sessions.model import Block, Message
from ctxtop.engine.sessions.tokenizer_factor import PRIOR_WEIGHT


def message(number: int, role: str, kind: str = "message") -> Message:
    return Message(f"m{number}", role, [Block("text", "x")], kind=kind)  # type: ignore[arg-type]


def laid_out(
    specs: list[SectionSpec], context: list[Message], tokens: list[int], budget: int, system: int
) -> tuple[PromptTree, Rendered]:
    profile = Profile("test", "", tuple(specs), CacheSpec("breakpoints"))
    names = content_names(profile, context)
    tree = build_tree(profile, context, names, tokens, budget, system)
    return tree, render_tree(tree, budget)


def test_flex_allocation_matches_prompt_tsx_worked_example() -> None:
    # prompt-tsx's 'all together now' (budget 100): content1/content2 without flexGrow
    # (basis 1 and 2), grow2a/b (flexGrow 2, reserve 20 each), grow1a/b (flexGrow 1,
    # reserve 10 each, basis 1 and 2). The library gives 13/26, then 25/25, then 11/23 when
    # the elements use 10, 20, 15, 20 tokens (a message: its words and 3 tokens of framing).
    specs = [
        SectionSpec("content1", "", "system"),
        SectionSpec("content2", "", "instructions", flex_basis=2),
        SectionSpec("grow2a", "", "attachments", flex_grow=2, flex_reserve=20),
        SectionSpec("grow2b", "", "history", flex_grow=2, flex_reserve=20),
        SectionSpec("grow1a", "", "current_user", flex_grow=1, flex_reserve=10),
        SectionSpec("grow1b", "", "current_rounds", flex_grow=1, flex_reserve=10, flex_basis=2),
    ]
    context = [
        message(1, "system", "instructions"),
        message(2, "user", "attachment"),
        message(3, "user"),
        message(4, "user"),
        message(5, "assistant"),
    ]
    _, rendered = laid_out(specs, context, [17, 12, 17, 97, 97], 100, 7)
    budgets = [rendered.budgets[spec.name] for spec in specs]
    assert budgets == [13, 26, 25, 25, 11, 23]


def test_token_limit_caps_a_section_and_frees_the_rest_for_its_siblings() -> None:
    specs = [
        SectionSpec("attachments", "", "attachments", token_limit="/6"),
        SectionSpec("history", "", "history"),
    ]
    _, rendered = laid_out(specs, [], [], 600, 0)
    assert [rendered.budgets[spec.name] for spec in specs] == [100, 500]  # 600/6 cap


def test_json_audit_drops_nulls_and_whitespace() -> None:
    text = json.dumps({"name": "a", "size": None, "items": [{"x": 1, "y": None}]}, indent=2)
    assert compact_json(text) == '{"name":"a","items":[{"x":1}]}'
    assert compact_json("plain text output") is None
    assert compact_json("42") is None


def test_forecast_from_steady_growth() -> None:
    # Growth 100, 200, 300 per request: mean 200, sample stdev 100; 1000 tokens left.
    result = forecast([1000, 1100, 1300, 1600], 1600, 2600)
    assert result.requests_left == 5.0
    assert result.low == pytest.approx(1000 / 300, abs=0.05)
    assert result.high == pytest.approx(1000 / 100, abs=0.05)
    assert forecast([1000], 1000, 2000).requests_left is None
    assert forecast([1000, 900], 900, 2000).requests_left is None  # shrinking


def test_accuracy_scores_each_request_before_and_after_calibration() -> None:
    # System 100; request 2 carried 1000 estimated message tokens and the API said 1300.
    points = [
        RequestPoint("r1", 600, 50, 500, 40),
        RequestPoint("r2", 1300, 50, 1000, 40),
        RequestPoint("r3", 1800, 50, 1400, 40),
    ]
    result = accuracy(points, 100, "o200k_base")
    assert result.requests == 2
    r2, r3 = result.rows
    assert r2.estimated == 1100 and r2.error_pct == pytest.approx(
        100 * (1100 - 1300) / 1300, abs=0.01
    )
    # Calibrated: previous prompt + output + new messages (1000 - 500 - 40 = 460) x factor 1.0
    # (nothing learnt from one request).
    assert r2.calibrated == 600 + 50 + 460
    # The factor learnt from r1 to r2: the prompt grew by 1300 - 600 = 700 for 1000 - 500 = 500
    # counted tokens, weighed with a starting guess of 1 over PRIOR_WEIGHT tokens.
    factor = (700 + PRIOR_WEIGHT) / (500 + PRIOR_WEIGHT)
    assert r3.calibrated == 1300 + 50 + round((1400 - 1000 - 40) * factor)
    errors = [abs(r2.error_pct), abs(r3.error_pct)]
    assert result.mean_abs_error_pct == pytest.approx(sum(errors) / 2, abs=0.01)
    assert result.max_abs_error_pct == max(errors)


def test_relevance_ranks_the_result_about_the_recent_topic_higher() -> None:
    cache = TermCache()
    cache.update(
        [
            ("parser", "def parse_config(path): the config parser reads yaml config files"),
            ("weather", "sunny skies tomorrow with light winds in the afternoon"),
        ]
    )
    scores = Scorer().scores(cache, ["parser", "weather"], terms("fix the config parser bug"))
    assert scores["parser"] > 0.2
    assert scores["weather"] == 0.0


def test_relevance_terms_are_the_words_as_written_in_any_script() -> None:
    """Words are matched in the text as written and lower-cased after: a letter outside ASCII
    that lower-cases to an ASCII one (the Kelvin sign to "k") is not part of a word."""
    assert terms("Parse_Config THE parser 42 7 \u212aelvin") == Counter(
        {"parse_config": 1, "parser": 1, "42": 1, "elvin": 1}
    )


def test_relevance_after_a_new_turn_is_what_a_cold_read_scores() -> None:
    """The dashboard's index, kept between updates, scores as ``ctxtop report``'s fresh one
    once a turn brings one more result among twenty (idf changed every document's norm)."""
    documents = [(f"r{i}", f"result {i} config parser alpha{i} beta{i % 3}") for i in range(20)]
    query = terms("fix the config parser")
    live, scorer = TermCache(), Scorer()
    live.update(documents)
    scorer.scores(live, [key for key, _ in documents], query)
    documents.append(("r20", "sunny skies and a config parser"))
    live.update(documents)
    keys = [key for key, _ in documents]
    cold = TermCache()
    cold.update(documents)
    assert scorer.scores(live, keys, query) == Scorer().scores(cold, keys, query)


def test_relevance_tf_idf_value() -> None:
    # Two documents; the query term "alpha" is only in the first, once among two terms.
    cache = TermCache()
    cache.update([("a", "alpha beta"), ("b", "gamma delta")])
    score = Scorer().scores(cache, ["a"], terms("alpha"))["a"]
    idf = math.log(3 / 2) + 1  # smoothed: (1 + documents) / (1 + document frequency)
    # Document vector (idf, idf) for alpha and beta; query vector (idf) for alpha.
    assert score == pytest.approx(idf * idf / (math.sqrt(2) * idf * idf), abs=1e-6)


def test_pruning_order_and_thresholds_are_the_renderers() -> None:
    # Copilot's layout: two history rounds (a PrioritizedList, priority 700: the older ranks
    # lower) and the current user message (900); every message is 3 tokens of framing more.
    specs = [
        SectionSpec("system", "", "system"),
        SectionSpec("history", "", "history", priority=700, prioritized_list=True),
        SectionSpec("current_user", "", "current_user", priority=900),
    ]
    context = [message(1, "user"), message(2, "assistant"), message(3, "user"), message(4, "user")]
    tokens = [147, 147, 197, 97]  # rounds of 300 and 200, the user message 100
    tree, rendered = laid_out(specs, context, tokens, 1000, 397)  # 1000 tokens in all
    assert not rendered.pruned
    nodes = {node.id: node for node in prompt_nodes(tree, rendered, 1000, 1000)}
    assert [(node.id, node.priority) for node in nodes.values()] == [
        ("history/round-1", 698),
        ("history/round-2", 699),
        ("m:m4", 900),
    ]
    assert nodes["history/round-1"].pruned_at_budget == 1000
    assert nodes["history/round-2"].pruned_at_budget == 700
    assert nodes["m:m4"].pruned_at_budget == 500
    # As the context grows, round 2 goes once it reaches the budget plus the 300 gone before.
    assert nodes["history/round-2"].pruned_at_fill == pytest.approx((1000 + 300) / 1000)
    # The renderer agrees: a node stays at its threshold and goes one token below it.
    for node in nodes.values():
        assert node.pruned_at_budget is not None
        kept = render_tree(tree, node.pruned_at_budget)
        assert not kept.pruned or node.id not in pruned_units(kept)
        gone = render_tree(tree, node.pruned_at_budget - 1)
        assert node.id in pruned_units(gone), (node.id, gone.pruned)


def pruned_units(rendered: Rendered) -> set[str]:
    """The pruned units: listed, inside a listed element, or a round that lost a message."""
    ids = {item.id for item in rendered.pruned}
    if "history" in ids:
        ids |= {"history/round-1", "history/round-2"}
    if "current_user" in ids:
        ids.add("m:m4")
    rounds = {"history/round-1": {"m:m1", "m:m2"}, "history/round-2": {"m:m3"}}
    return ids | {name for name, members in rounds.items() if members & ids}

"""The analysis parts on small inputs whose answers are worked out by hand in the test."""

from __future__ import annotations

import json
import math

import pytest

from engine.analysis.accuracy import RequestPoint, accuracy
from engine.analysis.forecast import forecast
from engine.analysis.json_audit import compact_json
from engine.analysis.profiles import SectionSpec
from engine.analysis.relevance import Scorer, TermCache, terms
from engine.analysis.sections import allocate
from engine.analysis.tree import NodeInput, lay_out


def test_flex_allocation_matches_prompt_tsx_worked_example() -> None:
    # prompt-tsx's 'all together now' (budget 100): content1/content2 without flexGrow
    # (basis 1 and 2), grow2a/b (flexGrow 2, reserve 20 each), grow1a/b (flexGrow 1,
    # reserve 10 each, basis 1 and 2). The library gives 13/26, then 25/25, then 11/23 when
    # the elements use 10, 20, 15, 20 tokens.
    specs = [
        SectionSpec("content1", "", "history"),
        SectionSpec("content2", "", "history", flex_basis=2),
        SectionSpec("grow2a", "", "history", flex_grow=2, flex_reserve=20),
        SectionSpec("grow2b", "", "history", flex_grow=2, flex_reserve=20),
        SectionSpec("grow1a", "", "history", flex_grow=1, flex_reserve=10),
        SectionSpec("grow1b", "", "history", flex_grow=1, flex_reserve=10, flex_basis=2),
    ]
    budgets = [a.budget for a in allocate(specs, [10, 20, 15, 20, 100, 100], 100)]
    assert budgets == [13, 26, 25, 25, 11, 23]


def test_token_limit_caps_a_section_and_frees_the_rest_for_its_siblings() -> None:
    specs = [
        SectionSpec("attachments", "", "attachments", token_limit="/6"),
        SectionSpec("history", "", "history"),
    ]
    budgets = [a.budget for a in allocate(specs, [0, 0], 600)]
    assert budgets == [100, 500]  # 600/6 cap; the sibling gets the rest of the group's share


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
    # Calibrated: previous prompt + output + new messages (1000 - 500 - 40 = 460) x factor 1.0.
    assert r2.calibrated == 600 + 50 + 460
    # The factor learnt from r2: actual new 1300 - 600 - 50 = 650 over estimated 460.
    factor = 0.7 + 0.3 * 650 / 460
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


def test_relevance_tf_idf_value() -> None:
    # Two documents; the query term "alpha" is only in the first, once among two terms.
    cache = TermCache()
    cache.update([("a", "alpha beta"), ("b", "gamma delta")])
    score = Scorer().scores(cache, ["a"], terms("alpha"))["a"]
    idf = math.log(3 / 2) + 1  # smoothed: (1 + documents) / (1 + document frequency)
    # Document vector (idf, idf) for alpha and beta; query vector (idf) for alpha.
    assert score == pytest.approx(idf * idf / (math.sqrt(2) * idf * idf), abs=1e-6)


def test_pruning_order_and_thresholds() -> None:
    nodes = [
        NodeInput("old", "history", 300, 698, 0),
        NodeInput("newer", "history", 200, 699, 1),
        NodeInput("user", "current_user", 100, 900, 2),
    ]
    laid, pruned = lay_out(nodes, fixed_tokens=400, budget=800, window=1000)
    # 1000 tokens in all, budget 800: the lowest priority (the oldest round) goes.
    assert [p.id for p in pruned] == ["old"]
    by_id = {node.id: node for node in laid}
    assert by_id["old"].pruned_at_budget == 1000
    assert by_id["newer"].pruned_at_budget == 700
    assert by_id["user"].pruned_at_budget == 500
    # As the context grows, "newer" goes once it reaches the budget plus the 300 already gone.
    assert by_id["newer"].pruned_at_fill == pytest.approx((800 + 300) / 1000)

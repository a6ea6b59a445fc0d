"""``ctxtop edit --target``: old tool results cleared down to a budget, the most relevant kept
through the two budget pools (mandatory: priority >= 0.7; optional: sized by the fill mode), on
a real Claude Code log; the fork is written, undone and the session left untouched as any
edit's."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ctxtop.engine.cli.main import main
from ctxtop.engine.editing.pools import (
    MANDATORY,
    OPTIONAL,
    Candidate,
    Target,
    keep_within,
    optional_size,
)
from ctxtop.engine.errors import CtxtopError
from ctxtop.tui.screens.budget import MODELS_OWN
from ctxtop.tui.screens.budget import parse_tokens as budget_key_tokens

ROOT = Path(__file__).resolve().parents[2]
# Claude Code 2.1.332, one prompt, 9 tool calls: two Reads of 37.5k and 34k tokens; 57,811
# tokens of context in a 1M window.
LARGE = (
    ROOT
    / "sample_sessions/claude-code/projects/-home-dev-projects-calc-large"
    / "5fd531c1-30e6-4b1b-93ee-f38e6d1dafe6.jsonl"
)


def test_targets_read_as_the_what_if_budget_reads_figures() -> None:
    assert (
        Target.parse("60%") == Target(60, True) and Target.parse("60%").tokens(200_000) == 120_000
    )
    assert Target.parse("120k").tokens(1) == 120_000
    assert Target.parse("1.5m").tokens(1) == 1_500_000
    assert Target.parse("120,000").tokens(1) == 120_000
    for bad in ("0%", "120%", "lots", "0", "-5k"):
        with pytest.raises(CtxtopError, match=r"\(e\.g\. "):
            Target.parse(bad)
    # The dashboard's b key reads its figures with the same parser.
    for text in ("64k", "64,000", "1.5m"):
        assert budget_key_tokens(text) == Target.parse(text).tokens(1)
    for text in ("x", "0"):
        assert budget_key_tokens(text) is None
        with pytest.raises(CtxtopError):
            Target.parse(text)
    assert budget_key_tokens(" ") == MODELS_OWN


def test_pools_keep_mandatory_results_first_and_size_the_optional_pool_by_fill() -> None:
    items = [
        Candidate("a", 1_000, 10, 1.0, 1),
        Candidate("b", 3_000, 10, 0.8, 2),
        Candidate("c", 2_000, 10, 0.5, 3),
        Candidate("d", 500, 10, 0.1, 4),
    ]
    placeholders = 40
    budget = placeholders + 6_000  # room for 6,000 tokens kept whole beyond the placeholders
    pools = keep_within(items, budget, "fill")
    assert [(k.call_id, k.pool) for k in pools.kept] == [
        ("a", MANDATORY),
        ("b", MANDATORY),
        ("c", OPTIONAL),
    ]
    # Each spends its tokens less its placeholder's (10).
    assert pools.spent(MANDATORY) == 3_980 and pools.spent(OPTIONAL) == 1_990
    assert [k.call_id for k in keep_within(items, budget, "minimal").kept] == ["a", "b"]
    # fillHalf: an optional pool of 3,000, no more than the 2,020 the mandatory pool left.
    assert keep_within(items, budget, "fillHalf").optional_size == 2_020
    # double: as much again as the mandatory pool took (4,000), within what is left (2,000).
    assert optional_size("double", 6_000, 4_000) == 4_000
    assert optional_size("fillHalf", 6_000, 0) == 3_000
    # A budget too small for the mandatory ones keeps what fits, never more than the budget.
    small = keep_within(items, placeholders + 2_500, "fill")
    assert [k.call_id for k in small.kept] == ["a", "d"]
    assert sum(k.tokens - 10 for k in small.kept) <= 2_500
    with pytest.raises(CtxtopError, match="unknown fill mode"):
        keep_within(items, budget, "most")


def edit(*args: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["edit", *args, "--json"]) == 0
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    return result


def test_clearing_down_to_a_token_target_on_a_real_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = tmp_path / LARGE.name
    shutil.copyfile(LARGE, session)
    original = hashlib.sha256(session.read_bytes()).hexdigest()
    outcome = edit(str(session), "--target", "40k", "--dry-run", capsys=capsys)
    target = outcome["target"]
    assert target["target_tokens"] == 40_000 and target["reached"]
    assert outcome["context_before"] == 57_811 and outcome["context_after"] <= 40_000
    kept = {item["tool_call_id"]: item for item in target["kept"]}
    cleared = {change["tool_call_id"] for change in outcome["changed"]}
    assert kept and cleared and not kept.keys() & cleared
    # The most relevant result is kept, in the mandatory pool; the pools spend within the budget.
    best = max(kept.values(), key=lambda item: item["priority"])
    assert best["priority"] == 1.0 and best["pool"] == "mandatory"
    assert all(item["pool"] == "optional" for item in kept.values() if item["priority"] < 0.7)
    assert target["mandatory_spent"] + target["optional_spent"] <= target["mandatory_pool"]
    assert outcome["policy"]["target"] == "40000" and outcome["policy"]["fill"] == "fill"
    assert outcome["cache_rewrite_tokens"] > 0 and outcome["cache_rewrite_cost_usd"] > 0

    # minimal: only the mandatory pool; more is cleared.
    minimal = edit(str(session), "--target", "40k", "--fill", "minimal", "--dry-run", capsys=capsys)
    assert {item["pool"] for item in minimal["target"]["kept"]} == {"mandatory"}
    assert minimal["context_after"] < outcome["context_after"]

    # Written and undone as any edit: the session itself is never changed.
    written = edit(str(session), "--target", "40k", capsys=capsys)
    fork = Path(written["fork"])
    assert fork.exists() and written["context_after"] == outcome["context_after"]
    assert main(["undo"]) == 0
    assert not fork.exists()
    assert hashlib.sha256(session.read_bytes()).hexdigest() == original


def test_text_preview_and_a_target_already_met(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["edit", str(LARGE), "--target", "5%", "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert "target: 5% of the window = 50,000 tokens, reached" in text
    assert "kept (mandatory pool): Read " in text and "priority 1.00" in text
    assert "cache rewrite: " in text and "dry run: nothing written" in text
    met = edit(str(LARGE), "--target", "60%", "--dry-run", capsys=capsys)
    assert met["changed"] == [] and met["target"]["reached"]
    assert met["nothing_to_clear"]["reason"].startswith("the context is within the target (60%")

"""The render report: per element its budget, tokens before and after, and why it was pruned."""

from __future__ import annotations

import json
from pathlib import Path

from ctxtop.engine.render.element_report import RenderReport, build_report
from ctxtop.engine.render.elements import text_chunk, token_limit, user
from ctxtop.engine.render.loader import document_from_data
from ctxtop.engine.render.renderer import render

EXAMPLES = Path(__file__).parent / "examples"


def report_for(name: str, budget: int, mode: str = "prompt-tsx") -> RenderReport:
    tree = json.loads((EXAMPLES / f"{name}.json").read_text())
    return build_report(render(document_from_data(tree), budget, "words", mode))


def reasons(report: RenderReport) -> dict[str, str | None]:
    return {row.id: row.reason for row in report.elements if row.pruned}


def test_keep_with_cascade_and_emptied_parents_are_named() -> None:
    report = report_for("07-keepwith-toolcalls", 28)
    assert reasons(report) == {
        "call": "keep-with",  # lost both tool calls with their results, nothing else left
        "res1": "empty parent",
        "kw1": "empty parent",
        "r1text": "priority",
        "res2": "empty parent",
        "kw2": "empty parent",
        "r2text": "priority",
    }
    assert report.token_count == 17 and report.fits


def test_chunk_members_go_with_the_chunk() -> None:
    report = report_for("06-chunk-passpriority-fragment", 14)
    assert reasons(report) == {
        "a": "priority",
        "b": "priority",
        "chunk": "priority",
        "c1": "inside chunk",
        "c2": "inside chunk",
    }
    rows = {row.id: row for row in report.elements}
    assert (rows["u"].tokens_before, rows["u"].tokens) == (19, 11)
    assert rows["pass"].depth == 1 and rows["b"].depth == 2


def test_token_limit_pruning_names_the_limit() -> None:
    tree = [
        user(
            text_chunk("keep this", id="outside", priority=9),
            token_limit(
                text_chunk("one two three", id="low", priority=1),
                text_chunk("four five", id="high", priority=2),
                max=3,
                id="limit",
            ),
            id="u",
        )
    ]
    result = render(tree, 100, "words", "exact")
    report = build_report(result)
    assert reasons(report) == {"low": "TokenLimit 3"}
    rows = {row.id: row for row in report.elements}
    assert rows["limit"].budget == result.budgets["limit"] == 3
    assert rows["high"].tokens == 2 and rows["low"].tokens_before == 3


def test_breakpoints_list_what_they_protect() -> None:
    report = report_for("10-cache-breakpoint", 20)
    assert [(bp.message, bp.cache_type, bp.protects) for bp in report.cache_breakpoints] == [
        ("sys", "ephemeral", ["sys (up to the breakpoint)"]),
        ("hist", "ephemeral", ["sys", "h1", "hist (up to the breakpoint)"]),
    ]


def test_a_failed_render_reports_the_error_and_prunes_nothing() -> None:
    report = report_for("10-cache-breakpoint", 5)
    assert report.error == ("BudgetExceededError: No lowest priority node found (path: Root -> 1)")
    assert not report.fits
    assert not any(row.pruned for row in report.elements)


def test_consumption_is_what_later_flex_groups_lose() -> None:
    report = report_for("03-flex", 60)
    rows = {row.id: row for row in report.elements}
    # m2's render uses its frame (3) and the echo's one word, far below its budget of 16
    assert (rows["m2"].budget, rows["m2"].consumed) == (16, 4)
    assert (rows["e2"].budget, rows["e2"].consumed) == (13, 1)
    # the fill takes its whole share; the flexGrow=1 group splits what is left after it
    assert rows["f2"].consumed == rows["f2"].budget == 33
    assert rows["g1a"].budget + rows["g1b"].budget == 60 - sum(
        rows[name].consumed or 0 for name in ("m1", "m2", "g2")
    )

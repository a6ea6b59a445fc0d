"""One layout of the prompt: what the dashboard shows (the live session's sections, prompt tree
and outline) is what ``ctxtop report --json`` prints, on every sample session, for the agent's
own profile and for Copilot's (which prunes) at a budget that makes it prune."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from analysis_expect import ROOT, report_json

from ctxtop.engine.agents import AGENTS
from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.analysis.profiles import load_profile
from ctxtop.engine.analysis.prompt_outline import prompt_outline
from ctxtop.engine.analysis.report import analyze_session
from ctxtop.engine.live.session import AnalysisChoice, LiveSession

SAMPLES = sorted(
    path
    for path in (ROOT / "sample_sessions").rglob("*")
    if path.suffix == ".jsonl" or (path.suffix == ".json" and "openai-messages" in path.parts)
)
# The layout: section budgets and tokens, the prompt tree's nodes, what is pruned and the
# renderer's own figures.
LAYOUT = (
    "profile",
    "budget",
    "sections",
    "nodes",
    "pruned",
    "render",
    "render_tokens",
    "render_error",
    "render_elements",
)


def layout(analysis: dict[str, Any]) -> dict[str, Any]:
    # Through JSON both ways, as the report prints it.
    return json.loads(json.dumps({key: analysis[key] for key in LAYOUT}))


def live_view(path: Path, choice: AnalysisChoice) -> Any:
    live = LiveSession(path)
    live.poll()
    view = live.view(choice)
    assert view is not None and view.analysis is not None, view and view.analysis_error
    return view


def test_there_are_samples_of_every_agent() -> None:
    """Every agent whose sessions are files (OpenCode's are rows of its database)."""
    agents = {path.relative_to(ROOT / "sample_sessions").parts[0] for path in SAMPLES}
    assert agents == set(AGENTS) - {"opencode"}


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_dashboard_lays_the_prompt_out_as_the_report_does(path: Path) -> None:
    view = live_view(path, AnalysisChoice())
    reported = report_json(path)["analysis"]
    assert layout(view.analysis.to_json()) == layout(reported)
    assert reported["render"].startswith("engine/render")
    # The tree on screen is the outline of that analysis.
    reader = SessionReader(path)
    state = read_all(reader)
    assert reader.adapter is not None
    fresh = analyze_session(reader.adapter)
    assert view.outline == prompt_outline(state, load_profile(reported["profile"]), fresh)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_pruning_budget_prunes_the_same_on_both(path: Path) -> None:
    whole = report_json(path, "--profile", "copilot")["analysis"]
    # A window whose budget keeps about two thirds of the rendered prompt.
    window = whole["thresholds"]["output_reserve"] + (whole["render_tokens"] or 0) * 2 // 3
    reported = report_json(path, "--profile", "copilot", "--budget", str(window))["analysis"]
    view = live_view(path, AnalysisChoice(profile="copilot", window=window))
    assert layout(view.analysis.to_json()) == layout(reported)
    assert reported["pruned"]
    # The outline strikes what the renderer pruned, with everything inside it.
    struck = {node.id for node in view.outline.nodes if node.pruned}
    assert {item["id"] for item in reported["pruned"]} <= struck

"""The prompt outline the dashboard's tree shows: sections > rounds > messages > blocks, with the
analysis's priorities, pruning and cache breakpoints on the right nodes."""

from __future__ import annotations

from pathlib import Path

from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.analysis.profiles import load_profile
from ctxtop.engine.analysis.prompt_outline import Outline, prompt_outline
from ctxtop.engine.analysis.report import analyze_session
from ctxtop.engine.analysis.snapshot import Analysis
from ctxtop.engine.live.demo import demo_lines
from ctxtop.engine.sessions.model import SessionState


def outline_of(
    tmp_path: Path, profile: str, window: int | None = None
) -> tuple[Outline, Analysis, SessionState]:
    session = tmp_path / "session.jsonl"
    session.write_bytes(b"".join(demo_lines()))
    reader = SessionReader(session)
    state = read_all(reader)
    assert reader.adapter is not None
    analysis = analyze_session(reader.adapter, profile=profile, window=window)
    return prompt_outline(state, load_profile(profile), analysis), analysis, state


def test_every_message_of_the_context_is_once_in_its_section(tmp_path: Path) -> None:
    outline, analysis, state = outline_of(tmp_path, "copilot")
    sections = [node for node in outline.nodes if node.parent is None]
    assert [node.id for node in sections] == [
        spec.name for spec in load_profile("copilot").sections
    ]
    messages = [node for node in outline.nodes if node.kind == "message"]
    assert [node.id for node in messages] != []
    assert sorted(node.id for node in messages) == sorted(f"m:{m.id}" for m in state.context)
    seen: set[str] = set()
    for node in outline.nodes:  # depth first: a parent comes before its children
        assert node.parent is None or node.parent in seen
        seen.add(node.id)
    by_name = {section.name: section.tokens for section in analysis.sections}
    children = outline.children()
    for section in sections:
        assert section.tokens == by_name[section.id]
        for round_node in (n for n in children.get(section.id, []) if n.kind == "round"):
            assert round_node.tokens == sum(n.tokens for n in children[round_node.id])


def test_tool_calls_and_results_sit_under_their_messages(tmp_path: Path) -> None:
    outline, _, state = outline_of(tmp_path, "claude-code")
    calls = [node for node in outline.nodes if node.kind == "tool_use"]
    results = [node for node in outline.nodes if node.kind == "tool_result"]
    assert calls and results
    assert all(
        node.label == f"tool call {state.tools[c].name}"
        for node, c in zip(
            calls,
            [b.tool_call_id for m in state.context for b in m.blocks if b.kind == "tool_use"],
            strict=True,
        )
    )
    parents = {node.id: node for node in outline.nodes}
    assert all(parents[node.parent].kind == "message" for node in calls + results if node.parent)


def test_cache_breakpoints_mark_the_node_they_follow(tmp_path: Path) -> None:
    outline, analysis, state = outline_of(tmp_path, "claude-code")
    assert [b.after for b in analysis.breakpoints] == ["system prompt and tools", "last message"]
    marked = [node for node in outline.nodes if node.breakpoint]
    assert [node.id for node in marked] == ["system", f"m:{state.context[-1].id}"]
    assert "last message" in (marked[-1].breakpoint or "")


def test_a_small_budget_prunes_rounds_with_everything_in_them(tmp_path: Path) -> None:
    full, whole, _ = outline_of(tmp_path, "copilot")
    assert not any(node.pruned for node in full.nodes) and whole.render_tokens is not None
    oldest = next(node for node in full.nodes if node.id.startswith("history/round-"))
    # A budget that cannot keep the oldest round (the renderer counts 3 tokens of framing more
    # per message than the outline shows).
    short = whole.render_tokens - next(
        e.tokens_before for e in whole.render_elements if e.id == oldest.id
    )
    window = whole.thresholds.output_reserve + short - 1
    small, analysis, _ = outline_of(tmp_path, "copilot", window=window)
    pruned_ids = {item.id for item in analysis.pruned}
    assert oldest.id in pruned_ids
    rounds = [node for node in small.nodes if node.kind == "round" and node.id in pruned_ids]
    assert rounds
    children = small.children()
    for round_node in rounds:
        assert round_node.pruned and round_node.priority is not None
        assert all(child.pruned for child in children[round_node.id])
    # What has no priority is pruned only after everything that has one: the system prompt and
    # the attachments stay.
    assert not any(node.pruned for node in small.nodes if node.parent in (None, "attachments"))


def test_search_and_ancestors(tmp_path: Path) -> None:
    outline, _, _ = outline_of(tmp_path, "claude-code")
    found = outline.search("TOOL RESULT")
    assert found and all("tool result" in node.label for node in found)
    chain = outline.ancestors(found[0].id)
    assert chain[0] == "messages" and chain[-1] == found[0].parent

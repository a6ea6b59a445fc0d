"""``ctxtop report --json`` on real Claude Code sessions against figures derived in the test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from genai_prices import data_snapshot
from sessions_expect import (
    ENC,
    claude_active_chain,
    claude_responses,
    claude_tools,
    prompt_total,
    records,
    report,
)

DATA = Path(__file__).parent / "data" / "real" / "claude-code"
GENERATED = DATA / "generated-cli-2.1.330" / "projects" / "-home-dev-demo-project"
PUBLIC = DATA / "public-d-kimuson-claude-code-viewer"
SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions" / "claude-code" / "projects"
HARNESS = Path(__file__).parent / "data" / "generated" / "claude-code"
MAIN_FILES = [
    path
    for path in (
        sorted(GENERATED.glob("*.jsonl"))
        + sorted(PUBLIC.glob("*.jsonl"))
        + sorted(SAMPLES.glob("*/*.jsonl"))
        + sorted(HARNESS.glob("*/*.jsonl"))
    )
    if not path.name.startswith("agent-")
]


def _case_id(path: Path) -> str:
    kind = "sample" if "sample_sessions" in path.parts else path.parent.name[:16]
    return f"{kind}-{path.name[:8]}"


@pytest.fixture(
    scope="module",
    params=MAIN_FILES,
    ids=_case_id,
)
def case(request: pytest.FixtureRequest) -> tuple[Path, list[dict[str, Any]], dict[str, Any]]:
    path: Path = request.param
    return path, records(path), report(path)


def dataset_window(model: str) -> int:
    """The model's window by genai-prices' own lookup (claude-opus-4-8: 1M, as Claude Code
    reports it; claude-sonnet-4-5: 200k)."""
    _, found = data_snapshot.get_snapshot().find_provider_model(model, None, None, None)
    window: int = found.context_window
    return window


def test_identity(case: tuple[Path, list[dict[str, Any]], dict[str, Any]]) -> None:
    path, rows, got = case
    assert got["agent"] == "claude-code"
    assert got["session_id"] == path.stem
    versions = [r["version"] for r in rows if "version" in r]
    assert got["agent_version"] == versions[-1]
    models = [
        r["message"]["model"]
        for r in rows
        if r.get("type") == "assistant"
        and not r.get("isSidechain")
        and r["message"]["model"] != "<synthetic>"
    ]
    assert got["model"] == models[-1]
    window = dataset_window(got["model"])
    assert got["context_window"] == window
    # Claude Code's rule: window - min(max output, 20k) - 13k buffer.
    assert got["autocompact_at"] == window - 20_000 - 13_000
    assert got["skipped_lines"] == []


def test_usage_counted_once_per_response(
    case: tuple[Path, list[dict[str, Any]], dict[str, Any]],
) -> None:
    _, rows, got = case
    main = [r for r in rows if not r.get("isSidechain")]
    responses = claude_responses(main)
    assert got["api_requests"] == len(responses)
    assert got["totals"] == {
        "input": sum(u["input_tokens"] for u in responses.values()),
        "output": sum(u["output_tokens"] for u in responses.values()),
        "cache_read": sum(u.get("cache_read_input_tokens", 0) for u in responses.values()),
        "cache_write": sum(u.get("cache_creation_input_tokens", 0) for u in responses.values()),
    }
    lines_per_response = sum(1 for r in main if r.get("type") == "assistant")
    assert lines_per_response > len(responses)  # the de-duplication matters in every file


def test_last_request_and_context(case: tuple[Path, list[dict[str, Any]], dict[str, Any]]) -> None:
    _, rows, got = case
    chain = claude_active_chain(rows)
    responses = claude_responses([r for r in rows if not r.get("isSidechain")])
    last_index = max(
        i
        for i, r in enumerate(chain)
        if r.get("type") == "assistant" and r["message"]["id"] in responses
    )
    usage = responses[chain[last_index]["message"]["id"]]
    assert got["last_request"]["input_tokens_total"] == prompt_total(usage)
    assert got["last_request"]["output_tokens"] == usage["output_tokens"]
    assert got["last_request"]["cache_read_tokens"] == usage.get("cache_read_input_tokens", 0)
    assert got["last_request"]["cache_write_tokens"] == usage.get("cache_creation_input_tokens", 0)
    reported = prompt_total(usage) + usage["output_tokens"]
    context = got["context_tokens"]
    sent_since = [
        r
        for r in chain[last_index + 1 :]
        if r.get("type") in ("user", "attachment")
        or (r.get("type") == "assistant" and r["message"]["id"] != usage_id(chain, last_index))
    ]
    # An output figure under half of the answer's own text is a placeholder (a record logged
    # while the answer streamed): the answer's text counts instead.
    answer_text = [
        block["text"]
        for r in chain
        if r.get("type") == "assistant" and r["message"]["id"] == usage_id(chain, last_index)
        for block in r["message"]["content"]
        if block.get("type") == "text"
    ]
    placeholder = 2 * usage["output_tokens"] < sum(ENC.count(text) for text in answer_text)
    if sent_since or placeholder:
        assert context["source"] == "calibrated"
        assert context["estimated"] > 0
        assert context["value"] == reported + context["estimated"]
    else:
        assert context == {**context, "value": reported, "source": "reported", "estimated": 0}
    assert got["fill_percent"] == round(100 * context["value"] / dataset_window(got["model"]), 1)


def usage_id(chain: list[dict[str, Any]], index: int) -> str:
    return str(chain[index]["message"]["id"])


def test_compactions(case: tuple[Path, list[dict[str, Any]], dict[str, Any]]) -> None:
    _, rows, got = case
    expected = [
        {
            "trigger": r["compactMetadata"]["trigger"],
            "pre_tokens": r["compactMetadata"]["preTokens"],
            "post_tokens": r["compactMetadata"].get("postTokens"),
        }
        for r in rows
        if r.get("subtype") == "compact_boundary" and not r.get("isSidechain")
    ]
    assert [
        {key: c[key] for key in ("trigger", "pre_tokens", "post_tokens")}
        for c in got["compactions"]
    ] == expected


def test_tools(case: tuple[Path, list[dict[str, Any]], dict[str, Any]]) -> None:
    _, rows, got = case
    expected = claude_tools(rows)
    assert {t["name"]: (t["calls"], t["result_tokens"]) for t in got["tools"]} == expected
    persisted = sum(
        1
        for r in rows
        if r.get("type") == "user" and not r.get("isSidechain")
        for block in (r["message"]["content"] if isinstance(r["message"]["content"], list) else [])
        if block.get("type") == "tool_result"
        and str(block.get("content")).startswith("<persisted-output>")
    )
    assert sum(t["persisted_outputs"] for t in got["tools"]) == persisted


def test_inline_sidechains_are_subagents_not_parent_spend() -> None:
    """1.0.x: sidechain lines are sub-agents, grouped by their root line."""
    path = PUBLIC / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
    rows = records(path)
    root_of: dict[str, str] = {}
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if not row.get("isSidechain"):
            continue
        root = root_of.get(row.get("parentUuid") or "", row["uuid"])
        root_of[row["uuid"]] = root
        groups.setdefault(root, []).append(row)
    got = report(path)
    subagents = {s["id"]: s for s in got["subagents"]}
    assert set(subagents) == set(groups)
    for root, group in groups.items():
        responses = claude_responses(group)
        assert subagents[root]["api_requests"] == len(responses)
        last = list(responses.values())[-1]
        assert subagents[root]["last_input_tokens_total"] == prompt_total(last)
    # The parent's figures exclude every sidechain response.
    main_ids = set(claude_responses([r for r in rows if not r.get("isSidechain")]))
    assert got["api_requests"] == len(main_ids)


def test_subagent_directory_with_replayed_parent_messages() -> None:
    """2.1.x: ``<session>/subagents/agent-<id>.jsonl``; responses the parent has don't count."""
    path = GENERATED / "b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl"
    parent_ids = set(claude_responses(records(path)))
    got = report(path)
    files = sorted((GENERATED / path.stem / "subagents").glob("agent-*.jsonl"))
    assert [s["id"] for s in got["subagents"]] == [f.stem.removeprefix("agent-") for f in files]
    for sub, file in zip(got["subagents"], files, strict=True):
        responses = claude_responses(records(file), exclude=parent_ids)
        assert sub["api_requests"] == len(responses)
        assert sub["last_input_tokens_total"] == prompt_total(list(responses.values())[-1])
        assert sub["description"] == "Count lines"
        assert sub["parent_tool_call_id"] == "toolu_01CvaRiDyxnYmRLZqT3RTENuIH"


def expected_subagents(path: Path, rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Sub-agent id → its records, by the layout of each Claude Code generation."""
    groups: dict[str, list[dict[str, Any]]] = {}
    root_of: dict[str, str] = {}
    for row in rows:  # 1.0.x: inline sidechains, one sub-agent per root line
        if row.get("isSidechain") and "uuid" in row:
            root = root_of.get(row.get("parentUuid") or "", row["uuid"])
            root_of[row["uuid"]] = root
            groups.setdefault(root, []).append(row)
    files = sorted((path.parent / path.stem / "subagents").rglob("agent-*.jsonl"))  # 2.1.x
    for file in sorted(path.parent.glob("agent-*.jsonl")):  # 2.0.x: beside the session
        if any(r.get("sessionId") == path.stem for r in records(file)):
            files.append(file)
    for file in files:
        groups[file.stem.removeprefix("agent-")] = records(file)
    return groups


def test_subagents(case: tuple[Path, list[dict[str, Any]], dict[str, Any]]) -> None:
    path, rows, got = case
    expected = expected_subagents(path, rows)
    parent_ids = set(claude_responses([r for r in rows if not r.get("isSidechain")]))
    subagents = {s["id"]: s for s in got["subagents"]}
    assert set(subagents) == set(expected)
    for agent_id, group in expected.items():
        responses = claude_responses(group, exclude=parent_ids)
        assert subagents[agent_id]["api_requests"] == len(responses)
        last = list(responses.values())[-1] if responses else None
        got_last = subagents[agent_id]["last_input_tokens_total"]
        assert got_last == (prompt_total(last) if last else None)
        if last is not None:
            # A sub-agent's window: its own last prompt and reply, plus what came after.
            context = subagents[agent_id]["context_tokens"]
            floor = prompt_total(last) + last["output_tokens"]
            if context["source"] == "reported":
                assert context["value"] == floor
            else:
                assert context["source"] == "calibrated"
                assert context["value"] > floor

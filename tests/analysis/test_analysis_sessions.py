"""The analysis of the sample sessions, checked against figures worked out here from the raw
logs, the registry and the tokenizer."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from analysis_expect import (
    AGENT_LOOP,
    CALC_MAIN,
    CODEX,
    ENC,
    before_compaction,
    count,
    report_json,
    section,
)

from ctxtop.engine.agents.session_reader import read_session


def claude_usage_after_boundary(path: Path) -> tuple[str, int]:
    """The first real response after the last compaction boundary: (message id, prompt)."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line]
    boundary = max(i for i, row in enumerate(rows) if row.get("subtype") == "compact_boundary")
    for row in rows[boundary:]:
        message = row.get("message") or {}
        if row.get("type") == "assistant" and message.get("model") != "<synthetic>":
            usage = message["usage"]
            prompt = (
                usage["input_tokens"]
                + usage["cache_creation_input_tokens"]
                + usage["cache_read_input_tokens"]
            )
            return message["id"], prompt
    raise AssertionError("no response after the boundary")


def test_claude_code_sections_infer_the_system_prompt_and_reconcile() -> None:
    report = report_json(CALC_MAIN)
    analysis = report["analysis"]
    assert analysis["version"] == 1 and analysis["profile"] == "claude-code"
    state = read_session(CALC_MAIN)
    response_id, prompt = claude_usage_after_boundary(CALC_MAIN)
    answer = next(i for i, m in enumerate(state.context) if m.response_key == response_id)
    system = section(analysis, "system")
    # What the first request after the compaction carried beyond the messages the log shows,
    # those counted with the tokenizer times the session's factor (the API's tokens per
    # tokenizer token, engine/sessions/tokenizer_factor.py).
    factor = analysis["tokenizer_factor"]
    assert system["tokens"] == prompt - round(count(state.context[:answer]) * factor)
    assert system["provenance"] == "inferred"
    attachments = [m for m in state.context if m.kind == "attachment"]
    conversation = [m for m in state.context if m.kind != "attachment" and m.role != "system"]
    assert section(analysis, "attachments")["tokens"] == round(count(attachments) * factor)
    assert section(analysis, "messages")["tokens"] == round(count(conversation) * factor)
    assert section(analysis, "messages")["provenance"] == (
        "calibrated" if factor != 1 else "estimated"
    )
    content = sum(
        section(analysis, name)["tokens"]
        for name in ("system", "instructions", "attachments", "messages")
    )
    assert analysis["residual_tokens"] == report["context_tokens"]["value"] - content
    # The inferred prefix makes the sum land within a few tokens of the reported figure.
    assert abs(analysis["residual_tokens"]) < 0.01 * report["context_tokens"]["value"]


def test_claude_code_thresholds_follow_the_agent_and_the_registry() -> None:
    analysis = report_json(CALC_MAIN)["analysis"]
    limits = analysis["thresholds"]
    # claude-opus-4-8: a 1M window (as Claude Code reports it), 64k max output; Claude Code
    # keeps min(64k, 20k) for output and compacts 13k below that.
    window = 1_000_000
    assert limits["window"] == window
    assert analysis["budget"] == limits["budget"] == window - 20_000
    assert limits["autocompact_at"] == window - 20_000 - 13_000
    assert limits["autocompact_buffer"] == 13_000
    assert section(analysis, "autocompact_buffer")["tokens"] == 13_000
    # ctxtop's own triggers: 65 % and 85 % of the window.
    assert limits["editing_at"] == 650_000 and limits["compaction_at"] == 850_000
    free = section(analysis, "free")["tokens"]
    assert free == window - 20_000 - 13_000 - analysis["context_tokens"]


def test_budget_override_asks_what_if_the_window_were_smaller() -> None:
    analysis = report_json(CALC_MAIN, "--budget", "50000")["analysis"]
    assert analysis["thresholds"]["window"] == 50_000
    assert analysis["budget"] == 30_000 and analysis["budget_overridden"] is True
    assert analysis["thresholds"]["autocompact_at"] == 17_000


def test_codex_cache_simulation_reads_the_previous_prompt_in_128_token_steps(
    tmp_path: Path,
) -> None:
    state = read_session(CODEX)
    compaction = state.compactions[0].line
    # Before the compaction (the log up to it: those requests are on its context).
    rows = report_json(before_compaction(CODEX, tmp_path))["analysis"]["cache"]["requests"]
    prompts = [r.usage.input_tokens_total for r in state.responses.values() if r.line < compaction]
    assert [row["prompt"] for row in rows] == prompts
    for previous, row in itertools.pairwise(rows):
        if row["prompt"] < previous["prompt"]:
            continue
        # OpenAI caches every prefix it saw; the previous prompt is one, counted in 128s.
        assert row["read"] == previous["prompt"] // 128 * 128
        assert row["write"] == 0 and row["uncached"] == row["prompt"] - row["read"]
    agreeing = [
        row
        for row in rows
        if abs(row["read"] - row["logged_read"]) <= 0.05 * row["logged_read"]
        and abs(row["write"] - row["logged_write"]) <= 0.05 * row["logged_write"]
    ]
    assert len(agreeing) / len(rows) >= 0.9
    # The whole log: only the requests after the compaction are simulated; the first reads the
    # system prompt and tools the requests before it left cached (every prefix is cached).
    analysis = report_json(CODEX)["analysis"]
    cache = analysis["cache"]
    after = [r for r in state.responses.values() if r.line > compaction]
    assert [row["line"] for row in cache["requests"]] == [r.line for r in after]
    # The system prompt and tools as the first request after the compaction carried them
    # beyond the messages before its answer (the simulation's, in the tokenizer's counts).
    first = after[0]
    answer = next(i for i, m in enumerate(state.context) if m.response_key == first.key)
    system = first.usage.input_tokens_total - count(state.context[:answer])
    assert cache["requests"][0]["read"] == system // 128 * 128 > 0
    # The figures of the requests before it are what the log reported.
    history = [r.usage for r in state.responses.values() if r.line < compaction]
    simulated = cache["requests"]
    assert cache["read"] == sum(u.cache_read_tokens for u in history) + sum(
        row["read"] for row in simulated
    )
    assert cache["uncached"] == sum(u.input_tokens for u in history) + sum(
        row["uncached"] for row in simulated
    )


def test_claude_code_cache_simulation_against_the_logged_cache_fields(tmp_path: Path) -> None:
    rows = report_json(before_compaction(CALC_MAIN, tmp_path))["analysis"]["cache"]["requests"]
    assert all(row["logged_read"] is not None for row in rows)
    reads = sum(abs(row["read"] - row["logged_read"]) <= 0.05 * row["logged_read"] for row in rows)
    assert reads / len(rows) >= 0.8
    # Within a run of requests, each one reads what the log says the previous one left cached.
    # The realagents model server caches the whole prompt it was sent (its next read is the
    # previous prompt, not the previous read + write), and the simulation follows the log.
    runs = [(a, b) for a, b in itertools.pairwise(rows) if b["logged_read"]]
    assert len(runs) >= 10
    assert sum(b["logged_read"] == a["prompt"] for a, b in runs) > len(runs) / 2
    followed = [b for a, b in runs if a["logged_read"] and b["read"] == a["prompt"]]
    assert len(followed) >= len(runs) - 3  # all but the first and the runs after a restart
    state = read_session(CALC_MAIN)
    # Price check on the first request: all written at 6.25/M, output at 25/M (claude-opus-4-8).
    first = rows[0]
    output = next(iter(state.responses.values())).usage.output_tokens
    expected = (first["write"] * 6.25 + first["uncached"] * 5.0 + output * 25.0) / 1e6
    assert abs(first["cost"] - expected) < 1e-6
    # The whole log: the requests after the compaction are simulated.
    after = report_json(CALC_MAIN)["analysis"]["cache"]["requests"]
    assert after and all(row["line"] > state.compactions[0].line for row in after)
    # Claude Code sends a new system prompt after a compaction: the first request reads nothing.
    assert after[0]["read"] == 0 and after[0]["logged_read"] == 0


def test_tool_figures_on_the_openai_sample() -> None:
    rows = [json.loads(line) for line in AGENT_LOOP.read_text().splitlines() if line]
    names = {
        call["id"]: call["function"]["name"] for row in rows for call in row.get("tool_calls") or []
    }
    expected: dict[str, list[int]] = {}
    for row in rows:
        if row["role"] == "tool":
            entry = expected.setdefault(names[row["tool_call_id"]], [0, 0])
            entry[0] += 1
            entry[1] += ENC.count(row["content"])
    analysis = report_json(AGENT_LOOP)["analysis"]
    window = analysis["thresholds"]["window"]
    got = {tool["name"]: tool for tool in analysis["tools"]}
    assert set(got) == set(expected)
    for name, (calls, tokens) in expected.items():
        assert got[name]["calls"] == calls
        assert got[name]["result_tokens"] == tokens
        assert abs(got[name]["share"] - tokens / window) < 1e-4


def test_json_savings_count_what_minified_json_without_nulls_saves(tmp_path: Path) -> None:
    result = {"files": [{"name": f"f{i}.py", "size": i * 10, "owner": None} for i in range(20)]}
    text = json.dumps(result, indent=4)
    compact = json.dumps(
        {"files": [{"name": f"f{i}.py", "size": i * 10} for i in range(20)]},
        separators=(",", ":"),
    )
    session = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "List the files."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": text},
        {"role": "assistant", "content": "Twenty files."},
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(session))
    tools = report_json(path)["analysis"]["tools"]
    assert tools[0]["name"] == "ls" and tools[0]["json_results"] == 1
    assert tools[0]["json_savings"] == ENC.count(text) - ENC.count(compact) > 0


def test_relevance_ranks_old_results_against_the_recent_conversation(tmp_path: Path) -> None:
    def call(call_id: str, name: str) -> dict[str, object]:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
            ],
        }

    session = [
        {"role": "user", "content": "Look around the repository."},
        call("c1", "read_file"),
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": "def parse_config(path):\n"
            "    # the config parser: yaml config into settings\n    return load_yaml(path)",
        },
        call("c2", "run_shell"),
        {"role": "tool", "tool_call_id": "c2", "content": "disk usage 41% on /dev/sda1"},
        {"role": "assistant", "content": "The repository has a config parser and a CLI."},
        {"role": "user", "content": "The config parser crashes on an empty yaml config. Fix it."},
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(session))
    relevance = report_json(path)["analysis"]["relevance"]
    assert [row["tool_call_id"] for row in relevance] == ["c2", "c1"]  # least relevant first
    assert relevance[0]["score"] == 0.0 < relevance[1]["score"]


def test_openai_models_cache_prefixes_by_themselves_whatever_the_profile() -> None:
    # The Copilot profile sets breakpoints, but an OpenAI model caches every prefix in steps of
    # 128 tokens from 1024 on: request n reads request n-1's whole prompt, rounded down.
    analysis = report_json(AGENT_LOOP, "--profile", "copilot")["analysis"]
    assert analysis["cache"]["style"] == "automatic"
    rows = analysis["cache"]["requests"]
    for previous, row in itertools.pairwise(rows):
        assert row["read"] == previous["prompt"] // 128 * 128
        assert row["write"] == 0


def test_estimate_accuracy_on_the_openai_sample() -> None:
    analysis = report_json(AGENT_LOOP)["analysis"]
    state = read_session(AGENT_LOOP)
    context = state.context
    requests = []
    for response in state.responses.values():
        answer = next(i for i, m in enumerate(context) if m.response_key == response.key)
        requests.append((response.usage.input_tokens_total, count(context[:answer])))
    system = requests[0][0] - requests[0][1]  # inferred from the first request
    accuracy = analysis["estimate_accuracy"]
    assert accuracy["requests"] == len(requests) - 1
    errors = [abs(100 * (system + tokens - prompt) / prompt) for prompt, tokens in requests[1:]]
    assert accuracy["mean_abs_error_pct"] == round(sum(errors) / len(errors), 2)
    assert accuracy["max_abs_error_pct"] == round(max(errors), 2)
    # Calibration against the previous request's reported figures is closer than the tokenizer.
    assert accuracy["calibrated_mean_abs_error_pct"] < accuracy["mean_abs_error_pct"]


def test_forecast_on_the_openai_sample() -> None:
    analysis = report_json(AGENT_LOOP)["analysis"]
    state = read_session(AGENT_LOOP)
    sizes = [r.usage.input_tokens_total + r.usage.output_tokens for r in state.responses.values()]
    growth = [later - earlier for earlier, later in itertools.pairwise(sizes)]
    mean = sum(growth) / len(growth)
    # The Copilot profile has no auto-compaction: the forecast runs to the full budget.
    left = analysis["budget"] - analysis["context_tokens"]
    forecast = analysis["forecast"]
    assert forecast["requests_left"] == round(left / mean, 1)
    assert forecast["low"] <= forecast["requests_left"] <= forecast["high"]
    assert analysis["history"] == sizes

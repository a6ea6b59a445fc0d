"""A proxied session's figures are the same in ``ctxtop report`` (text and --json) and on the
dashboard: the system section and the context by kind *measured* from the proxy's latest
request, the conversation sections scaled to its measured messages; without a measurement file
the report shows the inferred system figure as before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from ctxtop.engine.live.session import LiveSession
from ctxtop.engine.proxy.composition import measure
from ctxtop.engine.proxy.store import append_measurement

ROOT = Path(__file__).resolve().parents[2]
SESSION_ID = "b7f51370-d8c8-469b-95e6-e7046fb8d0f3"
SESSION = (
    ROOT / "sample_sessions/claude-code/projects/-home-dev-demo-project" / (SESSION_ID + ".jsonl")
)
REPORTED = 40_000  # the prompt size the API reported for the measured request


def measured_request() -> None:
    """The proxy's line for one Messages request of the sample session: a system prompt, two
    tools, user and assistant text, a tool call and its result."""
    body = {
        "system": [{"type": "text", "text": "You are a coding agent. " * 400}],
        "tools": [
            {"name": "Bash", "input_schema": {"type": "object"}, "description": "run " * 900},
            {"name": "Read", "input_schema": {"type": "object"}, "description": "read " * 200},
        ],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "fix the tests " * 300}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Running them. " * 50},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "FAILED x " * 1500},
            ]},
        ],
    }  # fmt: skip
    line = {
        "time": "2026-11-25T09:00:00.000+00:00",
        "protocol": "anthropic",
        "session_id": SESSION_ID,
        "status": 200,
        "model": "claude-sonnet-4-5",
        "usage": {"input_tokens": REPORTED, "cache_read_tokens": 0, "cache_write_tokens": 0},
        **measure("anthropic", body),
    }
    append_measurement(SESSION_ID, line)


def report(*options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxtop", "report", str(SESSION), *options],
        capture_output=True,
        text=True,
        check=True,
    )


def sections(analysis: dict[str, Any]) -> dict[str, tuple[int, str]]:
    return {s["name"]: (s["tokens"], s["provenance"]) for s in analysis["sections"]}


def test_report_and_dashboard_show_the_same_measured_figures() -> None:
    before = json.loads(report("--json").stdout)
    assert sections(before["analysis"])["system"][1] == "inferred"
    assert "measured" not in before

    measured_request()
    after = json.loads(report("--json").stdout)
    shown = sections(after["analysis"])
    system_tokens, provenance = shown["system"]
    assert provenance == "measured" and system_tokens != sections(before["analysis"])["system"][0]
    measured = after["measured"]
    assert system_tokens == measured["system_tokens"] + measured["tool_tokens"]
    # The parts are shares of the reported prompt: they add up to it (rounding aside).
    kinds = {kind["kind"]: kind["tokens"] for kind in measured["kinds"]}
    assert abs(sum(kinds.values()) - REPORTED) <= len(kinds)
    assert kinds["tool results"] > kinds["user"] > kinds["assistant"] > 0
    assert kinds["system prompt"] > kinds["tool definitions"] > 0
    outside = ("system", "autocompact_buffer", "output_reserve", "free")
    conversation = [v for k, v in shown.items() if k not in outside and v[0]]
    assert conversation and all(prov == "calibrated" for _, prov in conversation)
    assert abs(sum(t for t, _ in conversation) - measured["message_tokens"]) <= len(conversation)

    live = LiveSession(SESSION)
    live.poll()
    view = live.view()
    assert view is not None and view.analysis is not None
    dashboard = {s.name: (s.tokens, s.provenance) for s in view.analysis.sections}
    assert dashboard == shown
    assert {row.name: row.tokens for row in view.categories} == kinds
    assert {row.source for row in view.categories} == {"measured"}

    text = report().stdout
    assert f"shares of the {REPORTED:,} prompt the API reported" in text
    label = next(s["label"] for s in after["analysis"]["sections"] if s["name"] == "system")
    lines = text.splitlines()
    assert "(measured)" in label
    system_line = next(line for line in lines if line.strip().startswith(label[:40]))
    assert f"{system_tokens:,}" in system_line and system_line.endswith("measured")
    tool_results = f"{kinds['tool results']:,}"
    assert any(line.split() == ["tool", "results", tool_results, "measured"] for line in lines)

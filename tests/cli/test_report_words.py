"""`ctxtop report`'s text counts things in right English and gives the dashboard's forecast
words: "1 call", "1 request", and no range when both ends are one number ("968 (968-968)")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_cli import ctxtop  # tests/cli is on the path (pytest prepend import mode)

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
# The demo session: one sub-agent request pair, a tool called once, one request since /compact.
DEMO = next((SAMPLES / "claude-code" / "projects" / "-home-dev-demo-project").glob("*.jsonl"))


@pytest.fixture(scope="module")
def demo_report() -> tuple[str, dict[str, object]]:
    text = ctxtop("report", str(DEMO))
    data = ctxtop("report", "--json", str(DEMO))
    assert text.returncode == 0 and data.returncode == 0, text.stderr + data.stderr
    return text.stdout, json.loads(data.stdout)


def test_counted_nouns_agree_with_their_number(demo_report: tuple[str, dict]) -> None:
    text, data = demo_report
    assert not re.search(r"\b1 (calls|requests|rounds|compactions)\b", text), text
    for tool in data["tools"]:
        word = "call" if tool["calls"] == 1 else "calls"
        assert re.search(rf"^  {re.escape(tool['name'])} +{tool['calls']} {word} ", text, re.M)
    # The demo must keep showing a singular somewhere, or this test proves nothing.
    assert any(tool["calls"] == 1 for tool in data["tools"])


def test_the_forecast_reads_as_on_the_dashboard(demo_report: tuple[str, dict]) -> None:
    text, data = demo_report
    forecast = data["analysis"]["forecast"]
    line = next(line for line in text.splitlines() if line.startswith("forecast"))
    left = round(forecast["requests_left"])
    assert f"~{left:,} requests left before auto-compaction" in line
    one_number = f"{forecast['low']:,.0f}" == f"{forecast['high']:,.0f}"
    assert one_number  # the demo has one growth sample: low == high
    assert "(" + f"{forecast['low']:,.0f}" not in line and "–" not in line, line
    assert "(the growth of the last request)" in line

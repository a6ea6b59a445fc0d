"""``ctxtop report`` with the analysis: names of the JSON, the options, profiles, incremental."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from analysis_expect import AGENT_LOOP, CALC_MAIN, CODEX, report_json, run_report

from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.analysis.analyze import Analyzer
from ctxtop.engine.analysis.report import analyze_session
from ctxtop.engine.cli.main import main


def test_report_json_uses_the_documented_names() -> None:
    analysis = report_json(CALC_MAIN)["analysis"]
    for key in (
        "profile",
        "budget",
        "sections",
        "residual_tokens",
        "pruned",
        "breakpoints",
        "cache",
        "tools",
        "forecast",
        "relevance",
        "estimate_accuracy",
        "version",
    ):
        assert key in analysis
    assert {"name", "budget", "tokens", "provenance"} <= set(analysis["sections"][0])
    assert {"after", "protected_tokens"} <= set(analysis["breakpoints"][0])
    assert {"read", "write", "uncached", "logged_read", "logged_write", "cost"} <= set(
        analysis["cache"]["requests"][0]
    )
    assert {"requests_left", "low", "high"} <= set(analysis["forecast"])
    assert {
        "requests",
        "mean_abs_error_pct",
        "max_abs_error_pct",
        "calibrated_mean_abs_error_pct",
    } <= set(analysis["estimate_accuracy"])
    # Claude Code marks its system blocks and its last message.
    assert [b["after"] for b in analysis["breakpoints"]] == [
        "system prompt and tools",
        "last message",
    ]
    assert analysis["breakpoints"][-1]["protected_tokens"] == sum(
        s["tokens"]
        for s in analysis["sections"]
        if s["name"] in ("system", "instructions", "attachments", "messages")
    )


def test_text_report_has_a_short_analysis_section() -> None:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["report", str(CALC_MAIN)])
    assert code == 0
    text = buffer.getvalue()
    # Every figure says where it comes from: a section's provenance, the residual's inferred.
    residual = next(line for line in text.splitlines() if "residual (framing" in line)
    assert residual.rstrip().endswith("inferred")
    # calc-main has a compaction: the requests after it are simulated, those before as logged.
    assert "cache      read " in text
    assert "(simulated: the 2 requests on the live context" in text
    assert "as logged: the 19 requests before it)" in text
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["report", str(AGENT_LOOP)]) == 0  # no compaction: every request simulated
    assert "cache      simulated read" in buffer.getvalue()


def test_copilot_profile_lays_out_the_vs_code_prompt() -> None:
    analysis = report_json(AGENT_LOOP, "--profile", "copilot", "--budget", "20000")["analysis"]
    names = [s["name"] for s in analysis["sections"]]
    assert names[:6] == [
        "system",
        "instructions",
        "attachments",
        "tool_rounds",
        "current_user",
        "history",
    ]
    budget = analysis["budget"]
    assert budget == 20_000 - 16_000  # gpt-5 max output 128k, Copilot's reserve capped at 16k
    attachments = next(s for s in analysis["sections"] if s["name"] == "attachments")
    assert attachments["limit"] == budget // 6
    history = next(s for s in analysis["sections"] if s["name"] == "history")
    assert history["priority"] == 700
    # The one history round ranks just under the list's priority (prompt-tsx's PrioritizedList
    # gives its children the list's priority less the count, plus their index).
    assert [n["priority"] for n in analysis["nodes"] if n["section"] == "history"] == [699]


def test_older_history_rounds_rank_lower(tmp_path: Path) -> None:
    session = []
    for turn in range(3):
        session.append({"role": "user", "content": f"Question number {turn}?"})
        session.append({"role": "assistant", "content": f"Answer number {turn}."})
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(session))
    analysis = report_json(path, "--profile", "copilot")["analysis"]
    rounds = [n for n in analysis["nodes"] if n["section"] == "history"]
    assert [n["priority"] for n in rounds] == [698, 699]
    # So the older round would be pruned at a larger budget than the newer one.
    assert rounds[0]["pruned_at_budget"] > rounds[1]["pruned_at_budget"]


def test_renderer_prunes_the_oldest_history_round_first(tmp_path: Path) -> None:
    def words(topic: str, count: int) -> str:
        return " ".join(f"{topic}{i}" for i in range(count))

    session = [{"role": "system", "content": "You are a coding agent."}]
    for turn in range(2):
        session.append({"role": "user", "content": words(f"question{turn}x", 60)})
        session.append({"role": "assistant", "content": words(f"answer{turn}x", 60)})
    session.append({"role": "user", "content": "Now the last question."})
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(session))
    full = report_json(path, "--profile", "copilot")["analysis"]
    rounds = {n["id"]: n["tokens"] for n in full["nodes"] if n["section"] == "history"}
    content = full["context_tokens"]
    # Room for everything but the oldest round (Copilot keeps 16k of the window for output).
    window = 16_000 + content - rounds["history/round-1"] + 20
    analysis = report_json(path, "--profile", "copilot", "--budget", str(window))["analysis"]
    assert analysis["render"].startswith("engine/render")
    gone = {p["id"] for p in analysis["pruned"]}
    assert "history/round-1" in gone or {"m:m2", "m:m3"} <= gone
    assert not gone & {"history/round-2", "m:m4", "m:m5", "current_user", "m:m6"}
    elements = {e["id"]: e for e in analysis["render_elements"]}
    assert elements["history"]["tokens"] < elements["history"]["tokens_before"]
    assert elements["current_user"]["tokens"] == elements["current_user"]["tokens_before"]
    # The sections' budgets are the renderer's.
    assert all(
        s["budget"] == elements[s["name"]]["budget"]
        for s in analysis["sections"]
        if s["name"] in elements
    )


def test_unknown_profile_is_a_one_line_error() -> None:
    code, _, err = run_report(str(AGENT_LOOP), "--json", "--profile", "nope")
    assert code == 2
    assert err.count("\n") == 1 and "no such profile" in err and "copilot" in err


def test_user_profile_overrides_the_bundled_one(isolated_dirs: Path) -> None:
    folder = isolated_dirs / "config" / "profiles"
    folder.mkdir(parents=True)
    (folder / "claude-code.yaml").write_text(
        "name: claude-code\noutput_reserve: 1000\nautocompact: none\n"
        "sections:\n  - {name: everything, content: messages}\n"
        "  - {name: system, content: system}\n"
    )
    report = report_json(CALC_MAIN)
    analysis = report["analysis"]
    assert analysis["budget"] == report["context_window"] - 1000  # the profile's output reserve
    names = [s["name"] for s in analysis["sections"]]
    assert names == ["everything", "system", "autocompact_buffer", "output_reserve", "free"]
    assert analysis["sections"][3]["tokens"] == 1000  # the profile's reserve has its own row
    # The agent's own profile, replaced, keeps its rule: Claude Code's settings turn it off.
    assert analysis["thresholds"]["autocompact_at"] == report["autocompact_at"] is not None


def test_bad_user_profile_names_file_and_line(isolated_dirs: Path) -> None:
    folder = isolated_dirs / "config" / "profiles"
    folder.mkdir(parents=True)
    (folder / "mine.yaml").write_text("name: mine\nsections:\n  - {name: a, content: [\n")
    code, _, err = run_report(str(CALC_MAIN), "--json", "--profile", "mine")
    assert code == 2 and f"{folder / 'mine.yaml'}:" in err and "invalid YAML" in err


@pytest.mark.parametrize("sample", [CALC_MAIN, CODEX, AGENT_LOOP], ids=lambda p: p.parent.name)
def test_incremental_analysis_equals_a_fresh_one(tmp_path: Path, sample: Path) -> None:
    lines = sample.read_text().splitlines(keepends=True)
    path = tmp_path / sample.name
    path.write_text("".join(lines[: len(lines) // 2]))
    reader = SessionReader(path)
    read_all(reader)
    assert reader.adapter is not None
    analyzer = Analyzer()
    analyze_session(reader.adapter, analyzer=analyzer)
    for line in lines[len(lines) // 2 :]:
        with path.open("a") as handle:
            handle.write(line)
        reader.poll()
        live = analyze_session(reader.adapter, analyzer=analyzer)
    fresh_reader = SessionReader(path)
    read_all(fresh_reader)
    assert fresh_reader.adapter is not None
    fresh = analyze_session(fresh_reader.adapter)
    assert json.dumps(live.to_json()) == json.dumps(fresh.to_json())


def test_switching_profiles_on_one_analyzer_gives_the_fresh_answers() -> None:
    reader = SessionReader(CALC_MAIN)
    read_all(reader)
    assert reader.adapter is not None
    analyzer = Analyzer()
    for name in ("claude-code", "copilot", "claude-code", "codex"):
        kept = analyze_session(reader.adapter, profile=name, analyzer=analyzer).to_json()
        fresh = analyze_session(reader.adapter, profile=name).to_json()
        assert json.dumps(kept) == json.dumps(fresh), name

"""Claude Code's microcompaction (a ``microcompact_boundary`` line): the results and attachments
it names leave the context, the model seeing Claude Code's marker in place of each result, and
every view says so: the breakdown, the analysis's sections and tools, the render, the tools
table, the prompt tree, the edit and compact previews, the dashboard's events; a cold read and
a live tail agree line by line.

The expected figures are counted here with the tokenizer from the texts the log was written
with (microcompact_log.py), not taken from ctxtop's output.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from analysis_expect import check_clock, report_json, section
from microcompact_log import ENC, MARKER, SYSTEM, TRIGGER, Written, write_session

from ctxtop.engine.agents.claude_code.writer import ClaudeCodeWriter
from ctxtop.engine.agents.session_reader import SessionReader, read_session
from ctxtop.engine.analysis.profiles import load_profile
from ctxtop.engine.analysis.prompt_outline import prompt_outline
from ctxtop.engine.analysis.report import analyze_session
from ctxtop.engine.cli.main import main
from ctxtop.engine.live.session import LiveSession
from ctxtop.engine.sessions import model
from ctxtop.engine.sessions.report_json import to_json
from ctxtop.engine.tokens.short import short_tokens

CONTENT_SECTIONS = ("system", "instructions", "attachments", "messages")


@pytest.fixture
def written(tmp_path: Path) -> Written:
    return write_session(tmp_path / "projects")


def seen_now(written: Written) -> int:
    """What the last request's messages hold, counted from the texts the log was written
    with: the kept result, a marker per cleared result, the prompts, calls and answers."""
    return sum(ENC.count(text) for text in written.log.sent[:-1])  # (the last answer: after)


def test_the_cleared_results_and_attachment_leave_the_breakdown(written: Written) -> None:
    report = report_json(written.path, "--breakdown")
    categories = {
        entry["category"]: entry["tokens"] for entry in report["context_breakdown"]["categories"]
    }
    kept = sum(ENC.count(text) for text in written.kept.values())
    assert categories["tool_results"] == kept + len(written.cleared) * ENC.count(MARKER)
    assert "attachments" not in categories  # its only attachment was cleared
    # What the log shows of the context is the reported prompt less the system prompt.
    assert report["context_breakdown"]["estimated_total"] == seen_now(written) + ENC.count(
        "The first one, alpha."
    )
    assert report["context_tokens"]["reported"] == written.after + 90  # (and its output)


def test_the_sections_add_up_to_the_context_again(written: Written) -> None:
    """Regression: the cleared results were still counted, the sections far above the context
    (41-51 % on real sessions; here 40,463 tokens over a 6,176-token context)."""
    analysis = report_json(written.path)["analysis"]
    context = analysis["context_tokens"]
    parts = sum(section(analysis, name)["tokens"] for name in CONTENT_SECTIONS)
    assert parts <= context
    assert abs(analysis["residual_tokens"]) <= 0.05 * context
    # The system prompt is inferred from the request after the microcompaction: the one the
    # log was written with (the requests before it sent the cleared results whole).
    assert section(analysis, "system")["tokens"] == SYSTEM
    assert section(analysis, "attachments")["tokens"] == 0


def test_the_render_fits_a_budget_the_cleared_results_would_not(written: Written) -> None:
    """Regression: BudgetExceededError in the render, the cleared results counted whole."""
    budget = 30_000
    whole = sum(ENC.count(text) for text in written.cleared.values())
    assert whole > budget  # what the render had to fit before
    analysis = report_json(written.path, "--budget", str(budget))["analysis"]
    assert analysis["render_error"] is None
    assert analysis["pruned"] == []
    messages = next(e for e in analysis["render_elements"] if e["id"] == "messages")
    assert messages["tokens"] < budget


def test_the_tools_show_the_marker_for_the_cleared_results(written: Written) -> None:
    report = report_json(written.path)
    marker = ENC.count(MARKER)
    session_tools = {tool["name"]: tool["result_tokens"] for tool in report["tools"]}
    assert session_tools == {"Read": 2 * marker, "Grep": ENC.count(written.kept["toolu_03"])}
    largest = {
        item["tool_call_id"]: item["tokens"]
        for tool in report["analysis"]["tools"]
        for item in tool["largest"]
    }
    assert {call: largest[call] for call in written.cleared} == dict.fromkeys(
        written.cleared, marker
    )


def test_the_event_is_listed_with_the_compactions(written: Written) -> None:
    report = report_json(written.path)
    line = next(
        number
        for number, record in enumerate(written.log.lines, 1)
        if record.get("subtype") == "microcompact_boundary"
    )
    # microcompactMetadata, not the legacy compactMetadata beside it.
    assert report["microcompactions"] == [
        {
            "kind": "microcompaction",
            "trigger": TRIGGER,
            "pre_tokens": written.before,
            "tokens_saved": written.saved,
            "cleared_tool_results": 2,
            "cleared_attachments": 1,
            "line": line,
            "timestamp": written.log.lines[line - 1]["timestamp"],
        }
    ]
    assert report["compactions"] == []
    # A record ctxtop reads is neither "ignored" nor "unknown".
    listed = {**report["record_types"]["ignored"], **report["record_types"]["unknown"]}
    assert not [kind for kind in listed if "microcompact" in kind]
    code, text = _report_text(written.path)
    assert code == 0
    assert (
        f"microcompaction {TRIGGER}: {written.before:,}, {written.saved:,} saved"
        f" (2 tool results, 1 attachment cleared; line {line})"
    ) in text.splitlines()
    live = LiveSession(written.path)
    live.poll()
    view = live.view()
    assert view is not None
    [event] = [event for event in view.events if event.kind == "microcompaction"]
    assert event.line == line
    assert short_tokens(written.saved) in event.text
    assert short_tokens(written.before) in event.text


def _report_text(path: Path) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["report", str(path)])
    return code, out.getvalue()


def test_the_prompt_tree_holds_the_marker_and_not_the_attachment(written: Written) -> None:
    reader = SessionReader(written.path)
    state = read_session(written.path)
    reader.poll()
    assert reader.adapter is not None
    analysis = analyze_session(reader.adapter, profile="claude-code")
    outline = prompt_outline(state, load_profile("claude-code"), analysis)
    results = {node.call_id: node.tokens for node in outline.nodes if node.kind == "tool_result"}
    marker = ENC.count(MARKER)
    assert results == {
        **dict.fromkeys(written.cleared, marker),
        "toolu_03": ENC.count(written.kept["toolu_03"]),
    }
    assert not any(node.id == "m:a-1" for node in outline.nodes)


def test_the_edit_preview_has_nothing_to_clear_that_is_already_cleared(
    written: Written, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, the preview offered to clear the two results again, 39k tokens "saved"."""
    code = main(["edit", str(written.path), "--keep-tool-uses", "0", "--dry-run", "--json"])
    assert code == 0
    preview = json.loads(capsys.readouterr().out)
    assert not {item["tool_call_id"] for item in preview["changed"]} & set(written.cleared)
    assert (
        preview["tokens_before"]
        == report_json(written.path, "--breakdown")["context_breakdown"]["estimated_total"]
    )


def test_the_compact_preview_sizes_the_cleared_results_as_the_marker(
    written: Written, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["compact", str(written.path), "--keep-rounds", "1", "--dry-run", "--json"])
    assert code == 0
    preview = json.loads(capsys.readouterr().out)
    calls = {
        block["id"]: json.dumps(block["input"])
        for record in written.log.lines
        if record["type"] == "assistant"
        for block in record["message"]["content"]
        if block["type"] == "tool_use"
    }
    rounds = {
        row["call_ids"][0]: row["tokens"] for row in preview["round_table"] if row["call_ids"]
    }
    for call in written.cleared:
        assert rounds[call] == ENC.count(calls[call]) + ENC.count(MARKER)
    assert "alpha_1" not in preview["summary"]  # the summary does not quote a cleared result


def assert_live_equals_cold(path: Path, lines: list[bytes]) -> None:
    """Append one line at a time; after each, the live session's figures are the report's
    (and its analysis's), the state right after the boundary included."""
    path.write_bytes(b"")
    live = LiveSession(path)
    for end, line in enumerate(lines, 1):
        with path.open("ab") as handle:
            handle.write(line)
        live.poll()
        view = live.view()
        cold = report_json(path, "--breakdown")
        cold_analysis = cold.pop("analysis", None)
        assert view is not None, end
        check_clock(view, cold)
        shown: dict[str, Any] = json.loads(json.dumps(to_json(view.sample)))
        assert shown == cold, (end, _differences(shown, cold))
        if view.analysis is None:
            assert cold_analysis is None, end
            continue
        analysis = json.loads(json.dumps(view.analysis.to_json()))
        assert analysis == cold_analysis, (end, _differences(analysis, cold_analysis))


def _differences(live: dict[str, Any], cold: dict[str, Any]) -> dict[str, Any]:
    keys = sorted(set(live) | set(cold))
    return {key: (live.get(key), cold.get(key)) for key in keys if live.get(key) != cold.get(key)}


@pytest.mark.parametrize("compacted", [False, True], ids=["microcompacted", "then-compacted"])
def test_a_live_tail_shows_what_a_cold_read_shows(tmp_path: Path, compacted: bool) -> None:
    """With a /compact after it, a cold read takes the microcompaction in its lean history."""
    written = write_session(tmp_path / "source", compacted=compacted)
    lines = written.path.read_bytes().splitlines(keepends=True)
    copy = tmp_path / "live" / written.path.name
    copy.parent.mkdir()
    assert_live_equals_cold(copy, lines)
    report = report_json(copy)
    assert report["microcompactions"][0]["tokens_saved"] == written.saved
    assert len(report["compactions"]) == int(compacted)


def test_a_cleared_result_whose_call_was_archived(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long session lets go of old results' texts (their calls go to the archive's
    columns); a microcompaction naming one brings the call back with the marker."""
    written = write_session(tmp_path / "projects")
    monkeypatch.setattr(model, "RESULT_BUDGET", 50_000)  # (characters: the first result goes)
    lines = written.path.read_bytes().splitlines(keepends=True)
    boundary = next(i for i, line in enumerate(lines) if b"microcompact_boundary" in line)
    before = tmp_path / "before" / written.path.name
    before.parent.mkdir()
    before.write_bytes(b"".join(lines[:boundary]))
    assert read_session(before).tools.archived.find("toolu_01") >= 0
    report = report_json(written.path)
    tools = {tool["name"]: tool for tool in report["tools"]}
    assert tools["Read"]["result_tokens"] == 2 * ENC.count(MARKER)
    assert "result_tokens_estimated" not in tools["Read"]
    copy = tmp_path / "live" / written.path.name
    copy.parent.mkdir()
    assert_live_equals_cold(copy, lines)


def test_a_fork_keeps_the_cleared_results_cleared(written: Written) -> None:
    """An edit's fork holds the marker where the agent cleared a result: resumed by a release
    that does not read the microcompaction again, the model still sees what ctxtop showed."""
    writer = ClaudeCodeWriter(written.path, written.path.read_bytes())
    scanned = {use.call_id: use.result for use in writer.scan().uses}
    assert scanned == {**dict.fromkeys(written.cleared, MARKER), **written.kept}
    fork = writer.render({}, {}, "0f0f0f0f-0000-4000-8000-000000000000")
    results = {
        part["tool_use_id"]: part["content"]
        for line in fork.splitlines()
        for record in [json.loads(line)]
        if record.get("type") == "user" and isinstance(record["message"]["content"], list)
        for part in record["message"]["content"]
    }
    assert results == {**dict.fromkeys(written.cleared, MARKER), **written.kept}


def test_before_the_next_request_the_context_is_the_last_one_less_the_saving(
    written: Written, tmp_path: Path
) -> None:
    """Right after the boundary (the request it was made for not logged yet): the last
    reported context less what the agent says it saved, plus the new prompt; the system
    prompt still inferred from the requests before, on the context as they sent it."""
    lines = written.path.read_bytes().splitlines(keepends=True)
    boundary = next(i for i, line in enumerate(lines) if b"microcompact_boundary" in line)
    cut = tmp_path / "cut" / written.path.name
    cut.parent.mkdir()
    cut.write_bytes(b"".join(lines[: boundary + 1]))
    report = report_json(cut)
    prompt = ENC.count("And which one is larger?")
    assert report["context_tokens"]["value"] == written.before + 90 - written.saved + prompt
    assert report["context_tokens"]["source"] == "calibrated"
    analysis = report["analysis"]
    assert section(analysis, "system")["tokens"] == SYSTEM
    assert section(analysis, "free")["provenance"] == "calibrated"
    assert abs(analysis["residual_tokens"]) <= 0.05 * analysis["context_tokens"]

"""``ctxtop compactions``: what each compaction of real logs held, kept and dropped, on the
bundled samples (Claude Code 2.1.330 and 2.1.332 /compact, Codex 0.171 auto-compaction, Gemini
CLI and Copilot CLI), the 2.1.197 auto-compaction harness's thrashing log, and a
microcompaction."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from compaction_logs import (
    AUTOCOMPACT_2_1_332,
    CLAUDE_2_1_332,
    CLAUDE_DEMO,
    CODEX,
    GEMINI,
    ROOT,
    THRASH,
    write_session,
)

from ctxtop.engine.agents.session_reader import read_session
from ctxtop.engine.cli.main import main
from ctxtop.engine.forks.compact import compact_session
from ctxtop.engine.forks.compactions import (
    CARRIED_AT,
    CompactionHistory,
    Prefixes,
    before_line,
    inspect_compactions,
    line_starts,
    points,
)
from ctxtop.engine.forks.transaction import read_session_bytes

COPILOT = next((ROOT / "tests/sessions/data/generated/copilot-cli").rglob("events.jsonl"))


def inspected(path: Path) -> CompactionHistory:
    data = read_session_bytes(path)
    return inspect_compactions(path, data, read_session(path))


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_claude_code_compact_keeps_the_reattached_files_and_drops_a_git_log(
    capsys: pytest.CaptureFixture[str],
) -> None:
    found = run_json(capsys, "compactions", str(CLAUDE_2_1_332))
    [compaction] = found["compactions"]
    assert (compaction["line"], compaction["trigger"]) == (121, "manual")
    # The agent's own figures, the "after" as the report gives it (one value in every view).
    report = run_json(capsys, "report", str(CLAUDE_2_1_332))["compactions"][0]
    assert compaction["tokens_before"] == report["pre_tokens"] == 15_716
    assert compaction["tokens_after"] == report["after_tokens"]
    assert compaction["tokens_after_source"] == "inferred"  # postTokens + the system prompt
    # The summary is far smaller than what it replaced; the summary row of "after" is it.
    assert 0 < compaction["summary_tokens"] < compaction["replaced_tokens"]
    assert {"kind": "summary", "name": "", "count": 1, "tokens": compaction["summary_tokens"]} in (
        compaction["after"]
    )
    before = {(row["kind"], row["name"]): row for row in compaction["before"]}
    assert before["tool results", "Bash"]["count"] == 5
    assert before["user messages", ""]["count"] == 3
    kept = {entry["label"] for entry in compaction["kept"] if entry["kind"] == "file"}
    assert kept == {
        f"/home/dev/projects/calc-main/{name}"
        for name in ("src/calc/ops.py", "tests/test_ops.py", "src/calc/cli.py")
    }  # Claude Code re-attached them after its summary
    dropped = [entry["label"] for entry in compaction["dropped"]]
    assert "Bash ls -la && git status --short && git log --oneline -3" in dropped
    users = compaction["user_messages"]
    assert [entry["id"] for entry in users] == ["U1", "U2", "U3"]
    assert all(entry["coverage"] >= CARRIED_AT for entry in users) and not compaction["forgotten"]
    assert found["summary_growth"] == [compaction["summary_tokens"]]


def test_a_request_the_summary_does_not_carry_is_a_forgotten_instruction(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Claude Code 2.1.330's summary of the demo session names none of the STEP_ markers the
    user's first request was made of."""
    history = inspected(CLAUDE_DEMO)
    [compaction] = history.compactions
    [first] = compaction.of("user message")
    assert first.text.startswith("STEP_BIGREAD STEP_AGENT")
    assert first.coverage is not None and first.coverage < CARRIED_AT
    assert first.forgotten and compaction.forgotten == (first,)
    assert main(["compactions", str(CLAUDE_DEMO)]) == 0
    text = capsys.readouterr().out
    assert "forgotten instructions: U1" in text
    assert f"ctxtop restore {CLAUDE_DEMO} --compaction 1" in text


def test_codex_keeps_the_user_messages_verbatim_and_drops_the_big_log() -> None:
    [compaction] = inspected(CODEX).compactions
    assert (compaction.line, compaction.trigger) == (85, "auto")
    users = compaction.of("user message")
    assert [entry.fate for entry in users] == ["kept", "kept"]  # in Codex's replacement history
    server_log = [entry for entry in compaction.of("file") if entry.label == "server.log"]
    assert [entry.fate for entry in server_log] == ["dropped"]
    assert server_log[0].tokens > 10_000
    assert compaction.summary_tokens is not None
    assert compaction.summary_tokens < compaction.replaced_tokens


def test_claude_code_auto_compaction_mid_turn_keeps_the_last_read(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Claude Code 2.1.332 auto-compacted in the middle of a turn of two 29k-token reads of
    one file: the second read stays after the summary, the first is summarised."""
    found = run_json(capsys, "compactions", str(AUTOCOMPACT_2_1_332))
    [compaction] = found["compactions"]
    assert (compaction["line"], compaction["trigger"]) == (37, "auto")
    report = run_json(capsys, "report", str(AUTOCOMPACT_2_1_332))["compactions"][0]
    assert compaction["tokens_before"] == report["pre_tokens"]
    assert compaction["tokens_after"] == report["after_tokens"]
    [first] = [e for e in compaction["summarised"] if e["kind"] == "tool result"]
    [second] = [e for e in compaction["kept"] if e["kind"] == "tool result"]
    assert (first["id"], second["id"]) == ("T1", "T2")
    assert first["tokens"] > 25_000 and second["tokens"] > 25_000
    assert [e["fate"] for e in compaction["user_messages"]] == ["summarised"]
    assert compaction["replaced_tokens"] > 25_000 > compaction["summary_tokens"] > 0


def test_three_auto_compactions_each_with_its_summary() -> None:
    """The harness's thrashing run: three auto-compactions of one re-read 58k-token file."""
    history = inspected(THRASH)
    assert [c.line for c in history.compactions] == [14, 21, 28]
    assert [c.number for c in history.compactions] == [1, 2, 3]
    assert len(history.summary_growth) == 3 and all(history.summary_growth)
    for compaction in history.compactions:
        assert compaction.tokens_before is not None and compaction.tokens_before > 50_000


@pytest.mark.parametrize("path", [GEMINI, COPILOT], ids=["gemini-cli", "copilot-cli"])
def test_agents_without_a_restore_are_inspected_and_say_so(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = run_json(capsys, "compactions", str(path))
    assert len(found["compactions"]) == 1 and found["compactions"][0]["summary_tokens"]
    assert found["restore"].startswith(f"restore is not possible for {found['agent']} sessions")
    assert main(["restore", str(path), "--compaction", "1"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "restore is not possible" in error


def test_a_microcompaction_drops_the_results_it_cleared(tmp_path: Path) -> None:
    written = write_session(tmp_path / "projects")
    [micro] = inspected(written.path).compactions
    assert micro.kind == "microcompaction" and micro.summary_tokens is None
    dropped = {entry.text for entry in micro.dropped if entry.kind == "tool result"}
    assert dropped == set(written.cleared.values())
    kept = {entry.text for entry in micro.of("tool result") if entry.fate == "kept"}
    assert kept == set(written.kept.values())
    assert all(entry.fate == "kept" for entry in micro.of("user message"))
    # The two files whose reads it cleared, and the attachment, are dropped.
    files = {entry.label.rsplit("/", 1)[-1]: entry.fate for entry in micro.of("file")}
    assert files == {"NOTES.md": "dropped", "a.py": "dropped", "b.py": "dropped"}


@pytest.mark.parametrize("sample", [CLAUDE_2_1_332, CODEX], ids=["claude-code", "codex"])
def test_ctxtops_own_compaction_is_inspected_from_what_it_was_made_of(
    sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Claude Code fork starts at ctxtop's compaction: what it replaced is in the session it
    was made from (ctxtop's action log names it); a Codex fork holds it before its record."""
    source = tmp_path / sample.name
    shutil.copyfile(sample, source)
    outcome = compact_session(source, keep_rounds=1).as_json()
    found = run_json(capsys, "compactions", outcome["fork"])
    ours = found["compactions"][-1]
    assert ours["trigger"] == "ctxtop" and ours["tokens_after_source"] == "estimated"
    assert ours["tokens_after"] == outcome["context_after"]  # the figure the preview promised
    users = [entry["label"] for entry in ours["user_messages"]]
    assert users and all(entry["coverage"] is not None for entry in ours["user_messages"])
    assert ours["summary_tokens"] >= outcome["summary_tokens"]  # with its hand-off words
    assert sum(row["tokens"] for row in ours["before"]) > ours["replaced_tokens"] > 0


@pytest.mark.parametrize("path", [THRASH, CODEX, GEMINI], ids=["claude-code", "codex", "gemini"])
def test_one_pass_sees_each_prefix_as_a_read_of_it_alone(path: Path) -> None:
    """The inspector reads the session once, line by line, as a followed file is read: the
    context before and after each compaction is what a read of those lines alone gives."""
    data = read_session_bytes(path)
    state = read_session(path)
    starts = line_starts(data)
    cuts = sorted({line for line, _ in points(state)} | {line + 3 for line, _ in points(state)})
    prefixes = Prefixes(path, data)
    for line in cuts:
        alone = Prefixes(path, before_line(data, starts, line)).items(0)
        assert repr(prefixes.items(line)) == repr(alone), line


def test_a_session_without_compactions(capsys: pytest.CaptureFixture[str]) -> None:
    path = next(
        (ROOT / "sample_sessions/claude-code/projects/-home-dev-projects-calc-large").glob(
            "*.jsonl"
        )
    )
    assert main(["compactions", str(path)]) == 0
    assert "no compaction in this session" in capsys.readouterr().out

"""The real Claude Code 2.1.332 and Codex 0.171 CLIs resume both kinds of ``ctxtop restore``
fork of a session the pinned release wrote with a compaction of its own, against the project's
model server: one from just before the compaction (the request holds the history the
compaction dropped and not its summary), one with the summary and a dropped item re-added (the
request holds the summary, then ctxtop's marked message with the item, then the new prompt).

The CLIs (pinned) are installed with npm into a cache dir on first use; the tests are skipped,
saying why, only when npm or a package cannot be installed.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from agents import (
    CLAUDE_SAMPLE_2_1_332,
    CODEX_VERSION,
    ROOT,
    ClaudeProject,
    claude_bin,
    claude_main_request,
    codex_home,
)

from ctxtop.engine.forks.restore import HEADER, restore_session

PROMPT = "What did we do before the summary?"
# Claude Code's summary, and what only the history before the compaction holds.
CLAUDE_SUMMARY = "This session is being continued from a previous conversation"
AUTOCOMPACT = next((ROOT / "tests/compaction/data/calc-autocompact-2.1.332").glob("*.jsonl"))
# Each 2.1.332 log: the item its compaction dropped or summarised that the test re-adds, and a
# text only that item holds. calc-main: /compact at line 121, the git listing of the first Bash
# call (T3, which the summary does not mention); calc-autocompact: an auto-compaction between
# two reads of one turn, the first read's first line (T1).
CLAUDE_LOGS = {
    "compact": (CLAUDE_SAMPLE_2_1_332, "T3", "git status --short && git log --oneline -3"),
    "autocompact": (AUTOCOMPACT, "T1", "processed job 1 in 37 ms"),
}
CODEX_SAMPLE = next((ROOT / "sample_sessions/codex/sessions").rglob("rollout-*01a21f76-*.jsonl"))
# Codex's own summary (its mid-turn auto-compaction at line 85), and a line of the server.log
# output it dropped (F4).
CODEX_SUMMARY = "Another language model started to solve this problem"
CODEX_DROPPED = "processed job 1 in 37 ms"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("log", sorted(CLAUDE_LOGS))
def test_claude_code_resumes_both_restore_forks(tmp_path: Path, log: str) -> None:
    sample, item, dropped = CLAUDE_LOGS[log]
    claude = claude_bin()
    project = ClaudeProject.make(tmp_path, sample)
    source = project.session
    original = digest(source)

    before = restore_session(source, 1).as_json()
    sent = json.dumps(
        claude_main_request(project.resume(claude, before["session_id"], PROMPT), PROMPT),
        ensure_ascii=False,
    )
    assert dropped in sent and CLAUDE_SUMMARY not in sent
    assert sent.index(dropped) < sent.index(PROMPT)

    readded = restore_session(source, 1, [item]).as_json()
    messages = claude_main_request(project.resume(claude, readded["session_id"], PROMPT), PROMPT)
    sent = json.dumps(messages["messages"], ensure_ascii=False)
    assert sent.index(CLAUDE_SUMMARY) < sent.index(HEADER) < sent.index(PROMPT)
    assert sent.count(dropped) == 1  # in ctxtop's message only
    assert sent.index(HEADER) < sent.index(dropped)

    for outcome in (before, readded):  # the agent appended its turn to the fork
        assert PROMPT in Path(outcome["fork"]).read_text(encoding="utf-8")
    assert digest(source) == original


def test_codex_resumes_both_restore_forks(tmp_path: Path) -> None:
    records = [json.loads(line) for line in CODEX_SAMPLE.read_text(encoding="utf-8").splitlines()]
    assert records[0]["payload"]["cli_version"] == CODEX_VERSION
    with codex_home(tmp_path) as codex:
        # Codex resumes a thread only with the provider it was written with configured: the
        # harness's "fake" one, here the test's model server.
        config = codex.home / ".codex" / "config.toml"
        text = config.read_text(encoding="utf-8")
        text = text.replace('model_provider = "local"', 'model_provider = "fake"')
        config.write_text(text.replace("[model_providers.local]", "[model_providers.fake]"))
        source = codex.home / ".codex" / CODEX_SAMPLE.relative_to(CODEX_SAMPLE.parents[4])
        source.parent.mkdir(parents=True)
        shutil.copyfile(CODEX_SAMPLE, source)
        original = digest(source)

        before = restore_session(source, 1).as_json()
        sent = codex.resume(before["session_id"], PROMPT)
        assert CODEX_DROPPED in sent and CODEX_SUMMARY not in sent
        assert sent.index(CODEX_DROPPED) < sent.index(PROMPT)

        readded = restore_session(source, 1, ["F4"]).as_json()
        sent = codex.resume(readded["session_id"], PROMPT)
    assert sent.index(CODEX_SUMMARY) < sent.index(HEADER) < sent.index(PROMPT)
    assert sent.index(HEADER) < sent.index(CODEX_DROPPED)
    for outcome in (before, readded):
        assert PROMPT in Path(outcome["fork"]).read_text(encoding="utf-8")
    assert digest(source) == original

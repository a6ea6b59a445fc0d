"""The real Codex CLI resumes ctxtop's compaction of a rollout the pinned release wrote with a
mid-turn auto-compaction of its own (the bundled 0.171.0 sample: ``compacted`` with its
replacement history, ``world_state``, ``thread_settings_applied``): the request starts from
ctxtop's summary and carries the new prompt after it, not the history it summarised.

The CLI (pinned) is installed with npm into a cache dir on first use; the test is skipped, saying
why, only when it cannot be installed.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from agents import CODEX_VERSION, ROOT, codex_home

from ctxtop.engine.compaction.handoff import OPENING
from ctxtop.engine.forks.compact import compact_session

SAMPLE = next((ROOT / "sample_sessions/codex/sessions").rglob("rollout-*01a21f76-*.jsonl"))
# Resuming the rollout itself sends these; ctxtop's summary carries neither: the opening of
# Codex's own compaction summary, and a later line of a command's output (the summary keeps
# each output's first line).
DROPPED = ("Another language model started to solve this problem", "Ran 5 tests in")
PROMPT = "What does the log show now?"


def test_codex_resumes_ctxtops_compaction_of_its_own_compacted_rollout(tmp_path: Path) -> None:
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    assert records[0]["payload"]["cli_version"] == CODEX_VERSION
    assert [r for r in records if r["type"] == "compacted"]
    with codex_home(tmp_path) as codex:
        # Codex resumes a thread only with the provider it was written with configured: the
        # harness's "fake" one, here the test's model server.
        config = codex.home / ".codex" / "config.toml"
        text = config.read_text(encoding="utf-8")
        text = text.replace('model_provider = "local"', 'model_provider = "fake"')
        config.write_text(text.replace("[model_providers.local]", "[model_providers.fake]"))
        source = codex.home / ".codex" / SAMPLE.relative_to(SAMPLE.parents[4])
        source.parent.mkdir(parents=True)
        shutil.copyfile(SAMPLE, source)
        whole = codex.copy(tmp_path / "copy").resume(records[0]["payload"]["id"], PROMPT)
        assert all(dropped in whole for dropped in DROPPED)
        outcome = compact_session(source, keep_rounds=0).as_json()
        assert outcome["resume_command"].startswith("codex resume ")
        sent = codex.resume(outcome["session_id"], PROMPT)
    assert OPENING in sent and PROMPT in sent
    assert sent.index(OPENING) < sent.index(PROMPT)
    for dropped in DROPPED:
        assert dropped not in sent
    assert sent.count("Full transcript of the conversation before this summary") == 1
    assert PROMPT in Path(outcome["fork"]).read_text(encoding="utf-8")
    assert (
        hashlib.sha256(source.read_bytes()).hexdigest()
        == hashlib.sha256(SAMPLE.read_bytes()).hexdigest()
    )

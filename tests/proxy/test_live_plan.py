"""Live plans on disk: written atomically per session in the data dir, picked up by the proxy's
rewriter on the next request, and stopping (removing the plan) gives the agent's own bytes back."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ctxtop.engine.cli.cmd_live import plan_line
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.live.apply_plan import compact_plan, edit_plan
from ctxtop.engine.live.live_status import live_status
from ctxtop.engine.proxy.live_plan import (
    LivePlan,
    live_sessions,
    plan_path,
    plans_dir,
    save_plan,
    stop_plan,
)
from ctxtop.engine.proxy.rewrite_live import LiveRewriter

DATA = Path(__file__).resolve().parent / "data" / "live"
CLAUDE_LOG = next((DATA / "claude-code").glob("*-*-*.jsonl"))
BODY = (DATA / "claude-code" / "request.json").read_bytes()
SESSION = CLAUDE_LOG.stem


def test_the_rewriter_follows_the_plan_file_from_the_next_request() -> None:
    rewriter = LiveRewriter()
    assert rewriter("anthropic", SESSION, BODY) is None  # no plan: the agent's bytes
    edit, _ = edit_plan(CLAUDE_LOG, Policy(), SESSION)
    path = save_plan(edit)
    assert path.parent == plans_dir() and live_sessions() == [SESSION]
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    edited = rewriter("anthropic", SESSION, BODY)
    assert edited is not None and b"[ctxtop: old tool result cleared" in edited
    assert rewriter("anthropic", "another-session", BODY) is None
    assert rewriter("anthropic", None, BODY) is None
    compact, _ = compact_plan(CLAUDE_LOG, SESSION, keep_rounds=2)
    save_plan(compact)  # replaces the edit: the next request is compacted
    compacted = rewriter("anthropic", SESSION, BODY)
    assert compacted is not None and compacted != edited
    assert b"This session continues an earlier conversation that ctxtop compacted" in compacted
    assert stop_plan(SESSION) and not stop_plan(SESSION)
    assert rewriter("anthropic", SESSION, BODY) is None  # stopped: the agent's own request
    assert live_sessions() == []


def test_a_plan_reads_back_as_written() -> None:
    plan, _ = compact_plan(CLAUDE_LOG, SESSION, keep_rounds=1)
    path = save_plan(plan)
    assert LivePlan.from_json(json.loads(path.read_text())) == plan
    assert [p.name for p in path.parent.iterdir()] == [f"{SESSION}.json"]  # no temp left


def test_a_damaged_plan_changes_nothing() -> None:
    rewriter = LiveRewriter()
    path = plan_path(SESSION)
    path.parent.mkdir(parents=True)
    path.write_text('{"version": 1, "kind": "edit"', encoding="utf-8")
    assert rewriter("anthropic", SESSION, BODY) is None
    os.utime(path, ns=(1, 1))
    path.write_text(json.dumps({"version": 99, "kind": "edit"}), encoding="utf-8")
    assert rewriter("anthropic", SESSION, BODY) is None


@pytest.mark.parametrize("session", ["../x", "a/b", "", ".."])
def test_a_session_id_that_is_not_a_plain_name_is_refused(session: str) -> None:
    with pytest.raises(CtxtopError):
        plan_path(session)
    assert LiveRewriter()("anthropic", session, BODY) is None


def test_ctxtop_live_says_how_the_plans_figures_were_counted() -> None:
    """The plan keeps the preview's figures and how they were counted: with the session's
    tokenizer factor (calibrated, ~) or the tokenizer alone (estimate, ≈)."""
    plan, outcome = edit_plan(CLAUDE_LOG, Policy(), SESSION)
    preview = outcome.preview
    assert plan.figures["tokens_source"] == preview.tokens_source
    counted = "calibrated" if preview.loaded.factor().value != 1 else "estimate"
    before, after = preview.tokens_before, preview.tokens_after
    assert f"({before:,} -> {after:,} tokens, {counted})" in plan_line(plan)
    save_plan(plan)
    mark = "~" if counted == "calibrated" else "≈"
    assert f"the agent holds {before:,}{mark} tokens" in live_status(SESSION).summary()
    stop_plan(SESSION)

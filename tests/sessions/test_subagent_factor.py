"""A sub-agent's gauge before its own requests teach it a tokenizer factor (issue 25): it starts
from its parent's, the content factor and per-call tokens the parent's growth tells apart.

Real Claude Code 2.1.39 logs (Anthropic's own usage figures; subagent_factor/PROVENANCE.md): the
parent up to the sub-agent's start, and the sub-agent's own file, cut before its second request.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sessions_expect import prompt_total, records, report

from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.sessions.ledger import Ledger, encoding_for
from ctxtop.engine.sessions.tokenizer_factor import inherited, learn

DATA = Path(__file__).parent / "subagent_factor"
PARENT = DATA / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
SUBAGENT = PARENT.with_suffix("") / "subagents" / "agent-aac57f5.jsonl"


def _requests(rows: list[dict[str, object]]) -> list[int]:
    """Where each request's first record is (one answer is logged in several records)."""
    seen: dict[str, int] = {}
    for number, row in enumerate(rows):
        message = row.get("message")
        if row.get("type") == "assistant" and isinstance(message, dict):
            seen.setdefault(str(message["id"]), number)
    return list(seen.values())


def _session_with_cut_subagent(folder: Path, lines: int) -> Path:
    """The parent beside its sub-agent's first ``lines`` lines, as Claude Code lays them out."""
    parent = folder / PARENT.name
    shutil.copy(PARENT, parent)
    target = parent.with_suffix("") / "subagents" / SUBAGENT.name
    target.parent.mkdir(parents=True)
    target.write_bytes(b"".join(SUBAGENT.read_bytes().splitlines(keepends=True)[:lines]))
    return parent


def test_a_subagent_starts_from_its_parents_factor_and_per_call_tokens(tmp_path: Path) -> None:
    rows = records(SUBAGENT)
    second = _requests(rows)[1]
    sent = prompt_total(rows[second]["message"]["usage"])
    got = report(_session_with_cut_subagent(tmp_path, second))
    (subagent,) = got["subagents"]
    assert subagent["api_requests"] == 1
    shown = subagent["context_tokens"]
    assert shown["source"] == "calibrated"
    # Before: the tokenizer's count as it is (nothing learnt from one request), 16,766 for a
    # prompt of 17,762 (-5.6 %); the parent's single ratio (1.35) would overshoot.
    assert abs(shown["value"] - sent) / sent < 0.035
    assert shown["value"] > 17_000


def test_the_parents_growth_tells_calls_from_content() -> None:
    """Each tool call adds tokens the log's text does not hold: the parent's growth over its
    requests is the content's factor times its count plus that many tokens per call."""
    state = read_all(SessionReader(PARENT, lean_history=False))
    assert state is not None
    factor = learn(state, Ledger(), encoding_for(state))
    assert factor.call_fit is not None
    content, per_call = factor.call_fit
    # bench/call_framing.py on the whole session: content 1.13-1.14, 93 tokens per call.
    assert 1.0 < content < factor.value
    assert 50 < per_call < 150
    # A sub-agent with nothing of its own predicts with them: five calls whose results count
    # 1,000 tokens add more than the one ratio says, one file of 20,000 tokens less.
    start = inherited(factor)
    assert start.grown(1_000, 5) == round(1_000 * content + 5 * per_call) > factor.apply(1_000)
    assert start.grown(20_000, 1) < factor.apply(20_000)


def test_a_subagents_own_file_starts_from_its_parents_factor(tmp_path: Path) -> None:
    """Opened on its own (the dashboard's sub-agent view, ``ctxtop report`` of its file), it
    reads its parent beside it up to its own start: the same figure as within the session."""
    rows = records(SUBAGENT)
    second = _requests(rows)[1]
    sent = prompt_total(rows[second]["message"]["usage"])
    parent = _session_with_cut_subagent(tmp_path, second)
    within = report(parent)["subagents"][0]["context_tokens"]
    own = report(parent.with_suffix("") / "subagents" / SUBAGENT.name)
    assert own["subagent_of"]["parent_file"] == str(parent)
    assert own["context_tokens"]["value"] == within["value"]
    assert abs(own["context_tokens"]["value"] - sent) / sent < 0.035
    # Its parent's file holding nothing to learn from: the tokenizer's count as it is.
    (tmp_path / "alone").mkdir()
    alone = _session_with_cut_subagent(tmp_path / "alone", second)
    alone.write_bytes(b"")
    without = report(alone.with_suffix("") / "subagents" / SUBAGENT.name)
    assert abs(without["context_tokens"]["value"] - sent) / sent > 0.05

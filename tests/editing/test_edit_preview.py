"""The preview's cache figures, recomputed here from the fork and the registry's prices."""

from __future__ import annotations

import contextlib
import io
import json
import math
import shutil
from pathlib import Path

from ctxtop.engine.agents.session_reader import read_session
from ctxtop.engine.cli.main import main
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks.edit import edit_session
from ctxtop.engine.models.registry import lookup
from ctxtop.engine.tokens.encoding import get_encoding

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_sessions/openai-messages/agent-loop.jsonl"


def test_cache_rewrite_and_break_even(tmp_path: Path) -> None:
    source = tmp_path / SAMPLE.name
    shutil.copyfile(SAMPLE, source)
    outcome = edit_session(source, Policy(keep_turns=0)).as_json()
    fork = read_session(outcome["fork"])
    info = lookup(fork.model)
    encoding = get_encoding(info.encoding or "o200k_base")
    changed = {c["tool_call_id"] for c in outcome["changed"]}
    texts = [b.content() for m in fork.context for b in m.blocks]
    blocks = [b for m in fork.context for b in m.blocks]
    # the first edited block is the first cleared result (its call is unchanged)
    first = next(
        i for i, b in enumerate(blocks) if b.tool_call_id in changed and b.kind == "tool_result"
    )
    # Counted with the session's tokenizer factor, as every figure of the preview.
    rewrite = round(
        sum(encoding.count(text) for text in texts[first:]) * outcome["tokenizer_factor"]
    )
    assert outcome["cache_rewrite_tokens"] == rewrite
    saved = outcome["tokens_before"] - outcome["tokens_after"]
    prices = info.prices
    assert prices is not None and saved > 0
    extra = rewrite * (prices.cache_write_5m - prices.cache_read)
    assert outcome["break_even_requests"] == math.ceil(extra / (saved * prices.cache_read))
    assert outcome["tokens_before"] == sum(r["tokens_before"] for r in outcome["sections"])
    assert outcome["tokens_after"] == sum(r["tokens_after"] for r in outcome["sections"])
    results = next(r for r in outcome["sections"] if r["section"] == "tool_results")
    assert results["tokens_before"] - results["tokens_after"] == saved


REAL = ROOT / "tests/sessions/data/real/claude-code/public-d-kimuson-claude-code-viewer"


def test_a_real_sessions_preview_is_in_the_gauges_calibrated_figures(tmp_path: Path) -> None:
    """What the log holds, as the dashboard's context by kind has it (the tokenizer's counts
    times the session's factor), and the whole context as the gauge has it."""
    source = tmp_path / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    shutil.copyfile(REAL / source.name, source)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", str(source), "--json", "--breakdown"]) == 0
    report = json.loads(out.getvalue())
    outcome = edit_session(source, Policy(keep_turns=0), dry_run=True).as_json()
    assert outcome["changed"]
    assert outcome["tokens_source"] == "calibrated"
    assert outcome["tokenizer_factor"] == report["context_tokens"]["tokenizer_factor"] > 1
    assert outcome["tokens_before"] == report["context_breakdown"]["estimated_total"]
    assert outcome["context_before"] == report["context_tokens"]["value"]
    assert outcome["context_outside_log"] == outcome["context_before"] - outcome["tokens_before"]
    saved = outcome["tokens_before"] - outcome["tokens_after"]
    assert outcome["context_after"] == outcome["context_before"] - saved

"""A tool result over a megabyte is tokenized once per report: it is counted for its block and
for its tool's total, and the second count is a look-up (a 50 MB result took 9 s a count)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from conftest import Watch

from ctxtop.engine.cli.main import main
from ctxtop.engine.tokens.encoding import LARGE_TEXT

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions/openai-messages/agent-loop.jsonl"


def test_a_big_tool_result_is_tokenized_once(tmp_path: Path, watch: Watch) -> None:
    lines = SAMPLE.read_bytes().splitlines()
    # Text no other test counts (the in-memory count cache outlives a test).
    body = f"{tmp_path.name} " + "word " * (LARGE_TEXT // 4)
    record = {"role": "tool", "tool_call_id": "call_big", "content": body}
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"\n".join([*lines[:3], json.dumps(record).encode(), *lines[3:]]) + b"\n")
    out = io.StringIO()
    with watch.active(), contextlib.redirect_stdout(out):
        code = main(["report", str(path), "--json"])
    assert code == 0
    assert json.loads(out.getvalue())["tools"], "the big result is one of its tool's"
    assert [len(text) for text in watch.counted if len(text) > LARGE_TEXT] == [len(body)]

"""Benchmark of the session reader on a synthetic Copilot CLI event log (same figures as tail.py).

Builds a ~100 MB (and a ~1 MB) ``events.jsonl`` from the bundled Copilot CLI sample
(``sample_sessions/copilot-cli``): its ``session.start`` once, then its events (a sub-agent's
included, ``session.shutdown`` left out) repeated with fresh API call, tool call and message ids
and unique tool outputs per round, and measures with bench/tail.py.

Usage: python bench/tail_copilot.py [--size-mb 100] [--keep DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tail
from replay import Replay

SAMPLE = next((tail.ROOT / "sample_sessions" / "copilot-cli").rglob("events.jsonl"))


def generator() -> Replay:
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    head = [line for line, row in zip(lines, rows, strict=True) if row["type"] == "session.start"]
    template = [
        line
        for line, row in zip(lines, rows, strict=True)
        if row["type"] not in ("session.start", "session.shutdown")
    ]
    ids: set[str] = set()
    for row in rows:
        data = row["data"]
        for key in ("toolCallId", "messageId", "apiCallId"):
            if isinstance(data.get(key), str):
                ids.add(data[key])
        usage = data.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("apiCallId"), str):
            ids.add(usage["apiCallId"])
    return Replay(head, template, ids, '"content":"')


if __name__ == "__main__":
    raise SystemExit(tail.main(generator, __doc__ or ""))

"""Benchmark of the session reader on a synthetic Gemini CLI session (same figures as tail.py).

Builds a ~100 MB (and a ~1 MB) chat recording from the bundled Gemini CLI sample
(``sample_sessions/gemini-cli``): its metadata and first ``$set`` history once, then its message
and ``$set`` lines repeated with fresh message and call ids and unique tool outputs per round
(each answered message still written twice), and measures with bench/tail.py.

Usage: python bench/tail_gemini.py [--size-mb 100] [--keep DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tail
from replay import Replay

SAMPLE = next((tail.ROOT / "sample_sessions" / "gemini-cli").rglob("chats/session-*.jsonl"))


def generator() -> Replay:
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    head = [line for line in lines if "sessionId" in json.loads(line) or '"messages"' in line]
    template = [line for line in lines if line not in head]
    ids: set[str] = set()
    for line in template:
        record = json.loads(line)
        if isinstance(record.get("id"), str):
            ids.add(record["id"])
        ids.update(call["id"] for call in record.get("toolCalls") or [])
    return Replay(head, template, ids, '"output":"')


if __name__ == "__main__":
    raise SystemExit(tail.main(generator, __doc__ or ""))

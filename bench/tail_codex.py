"""Benchmark of the session reader on a synthetic Codex CLI rollout (same figures as tail.py).

Builds a ~100 MB (and a ~1 MB) rollout by repeating the records of the bundled Codex sample
(``sample_sessions/codex``) after one ``session_meta``: fresh call ids, response ids and output
texts per round, running token totals that keep growing (so every round's responses count), the
``compacted`` record left out (so the context keeps growing), then measures with bench/tail.py:
first complete report, peak RSS, per appended line (poll + build_report) p50/p95, re-open.

Usage: python bench/tail_codex.py [--size-mb 100] [--keep DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tail

SAMPLE = next((tail.ROOT / "sample_sessions" / "codex").glob("sessions/*/*/*/rollout-*.jsonl"))
_TOTALS = ("total_token_usage", "thread_token_usage")


def _dump(record: Any) -> bytes:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


class CodexGenerator(tail.Generator):
    """Endless rollout lines: the sample's records after its session_meta, fresh per round."""

    def __init__(self) -> None:
        rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
        self.meta = rows[0]
        self.template = [row for row in rows[1:] if row["type"] != "compacted"]
        self.round = 0
        self.index = 0
        self.started = False
        self.offset = 0  # added to the running totals, so each round's totals are new
        self.last_total = 0

    def next_line(self) -> bytes:
        if not self.started:
            self.started = True
            return _dump(self.meta)
        if self.index == len(self.template):
            self.index = 0
            self.round += 1
            self.offset = self.last_total
        record = self.template[self.index]
        self.index += 1
        return _dump(self._fresh(record, f"{self.round:08x}"))

    def _fresh(self, record: dict[str, Any], suffix: str) -> dict[str, Any]:
        payload = dict(record["payload"])
        if "call_id" in payload:
            payload["call_id"] = f"{payload['call_id']}_{suffix}"
        if isinstance(payload.get("output"), str):
            payload["output"] = f"[{suffix}] {payload['output']}"
        if isinstance(payload.get("response_id"), str):
            payload["response_id"] = f"{payload['response_id']}_{suffix}"
        info = payload.get("info")
        if isinstance(info, dict):
            payload["info"] = info = dict(info)
        for holder in (payload, info):
            for key in _TOTALS:
                if isinstance(holder, dict) and isinstance(holder.get(key), dict):
                    total = holder[key]["total_tokens"] + self.offset
                    holder[key] = {**holder[key], "total_tokens": total}
                    self.last_total = max(self.last_total, total)
        return {**record, "payload": payload}


if __name__ == "__main__":
    raise SystemExit(tail.main(CodexGenerator, __doc__ or ""))

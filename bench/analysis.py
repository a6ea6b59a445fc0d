"""Benchmark of the analysis: a session whose live context is ~200k tokens, one line at a time.

Writes a Claude Code session (records shaped like the sample in tests/sessions/data) whose
context holds about 200k tokens of tool results (text and JSON), reads it, analyses it once
(the first analysis tokenizes everything), then appends lines one at a time (an assistant
response with usage, then its tool result) and times ``Analyzer.analyze`` after each (the
reader's own poll is timed apart).

Usage: python bench/analysis.py [--tokens 200000] [--appends 60]
Target (issue 5): <= 50 ms per analysis when only the last line changed. The analysis includes
laying the prompt tree out with the prompt renderer (engine/render), as the dashboard does; the
session is Claude Code's, whose profile is laid out without pruning.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxtop.engine.agents.session_reader import SessionReader, read_all  # noqa: E402
from ctxtop.engine.analysis.analyze import Analyzer  # noqa: E402
from ctxtop.engine.analysis.report import analyze_session  # noqa: E402
from ctxtop.engine.sessions.sample import context_tokens  # noqa: E402

SESSION = "0b3c9a57-5f7e-4d2c-9a51-bench0000001"
VOCABULARY = (
    "def class return import self value result config parser token window cache prompt request "
    "response message tool error file path line test assert build session model context budget "
    "section profile history forecast relevance"
)
WORDS = VOCABULARY.split()


class Writer:
    def __init__(self, seed: int = 7) -> None:
        self.random = random.Random(seed)
        self.parent: str | None = None
        self.prompt = 18_000  # the first request: system prompt and tools included
        self.count = 0
        self.clock = 1_700_000_000.0

    def _base(self, kind: str) -> dict[str, Any]:
        record_id = str(uuid.UUID(int=self.random.getrandbits(128)))
        self.clock += 2.0
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.clock)) + ".000Z"
        record = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "type": kind,
            "uuid": record_id,
            "timestamp": stamp,
            "sessionId": SESSION,
            "version": "2.1.197",
            "cwd": "/home/dev/bench",
        }
        self.parent = record_id
        return record

    def text(self, words: int) -> str:
        return " ".join(self.random.choice(WORDS) for _ in range(words))

    def user(self, text: str) -> str:
        record = self._base("user")
        record["message"] = {"role": "user", "content": text}
        return json.dumps(record)

    def assistant(self, call_id: str, new_tokens: int) -> str:
        record = self._base("assistant")
        self.count += 1
        self.prompt += new_tokens
        record["message"] = {
            "id": f"msg_bench_{self.count:05d}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [
                {"type": "text", "text": self.text(30)},
                {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": "ls"}},
            ],
            "usage": {
                "input_tokens": 5,
                "cache_creation_input_tokens": new_tokens,
                "cache_read_input_tokens": self.prompt - new_tokens - 5,
                "output_tokens": 80,
            },
        }
        return json.dumps(record)

    def result(self, call_id: str, size_words: int) -> str:
        record = self._base("user")
        if self.random.random() < 0.3:
            rows = [
                {"name": self.random.choice(WORDS), "size": i, "note": None}
                for i in range(size_words // 6)
            ]
            content = json.dumps(rows, indent=2)
        else:
            content = self.text(size_words)
        record["message"] = {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call_id, "content": content}],
        }
        return json.dumps(record)

    def round(self, size_words: int) -> list[str]:
        call_id = f"toolu_bench_{self.count:05d}"
        return [self.assistant(call_id, size_words + 120), self.result(call_id, size_words)]


def build(path: Path, tokens: int) -> Writer:
    writer = Writer()
    lines = [writer.user("Please go through the repository and tidy up the build.")]
    while writer.prompt < tokens:
        lines.extend(writer.round(writer.random.randint(60, 900)))
        if writer.count % 25 == 0:
            lines.append(writer.user(writer.text(40)))
    path.write_text("\n".join(lines) + "\n")
    return writer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=200_000)
    parser.add_argument("--appends", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{SESSION}.jsonl"
        writer = build(path, args.tokens)
        reader = SessionReader(path)
        read_all(reader)
        assert reader.adapter is not None
        state = reader.adapter.snapshot()
        analyzer = Analyzer()
        started = time.perf_counter()
        analysis = analyze_session(reader.adapter, analyzer=analyzer)
        first = time.perf_counter() - started
        figure = context_tokens(state, analyzer.ledger)
        print(
            f"session: {path.stat().st_size / 1e6:.1f} MB, {len(state.context)} messages,"
            f" context {figure.value:,} tokens ({figure.source}), {len(analysis.tools)} tools,"
            f" {len(analysis.relevance)} results scored"
        )
        print(f"first analysis (tokenizes the whole context): {first * 1000:.0f} ms")
        polls: list[float] = []
        times: list[float] = []
        cpu: list[float] = []  # the process's CPU time: less disturbed by a busy machine
        pending: list[str] = []
        for _ in range(args.appends):
            if not pending:
                pending = writer.round(writer.random.randint(100, 600))
            with path.open("a") as out:
                out.write(pending.pop(0) + "\n")
            started = time.perf_counter()
            reader.poll()
            polled = time.perf_counter()
            before = time.process_time()
            analysis = analyze_session(reader.adapter, analyzer=analyzer)
            cpu.append(time.process_time() - before)
            done = time.perf_counter()
            polls.append(polled - started)
            times.append(done - polled)
        times.sort()
        p95 = times[max(int(len(times) * 0.95) - 1, 0)]
        print(
            f"incremental analysis after a one-line append ({len(times)} appends):"
            f" median {statistics.median(times) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms,"
            f" max {times[-1] * 1000:.1f} ms (target <= 50 ms)"
        )
        cpu.sort()
        print(
            f"  CPU time of it: median {statistics.median(cpu) * 1000:.1f} ms,"
            f" p95 {cpu[max(int(len(cpu) * 0.95) - 1, 0)] * 1000:.1f} ms"
            f" (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
        )
        print(f"reader poll per append: median {statistics.median(polls) * 1000:.2f} ms")
        print(
            f"context now {analysis.context_tokens:,} tokens,"
            f" {len(analysis.cache.requests)} requests"
        )


if __name__ == "__main__":
    main()

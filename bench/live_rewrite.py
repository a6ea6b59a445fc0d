"""Benchmark of the live rewriter: what an applied plan adds to each proxied request.

Builds Anthropic Messages requests of N rounds (one Bash call and a 2 KB result each, in the
shape of the request the real Claude Code sent in tests/proxy/data/live) and a plan that clears
every result but the last 3 (an edit) or summarises all but the last 3 rounds (a compaction),
then times ``LiveRewriter`` on them (plan lookup: one stat; parse, rewrite, serialise) and, for
comparison, the lookup alone when the session has no plan. Prints p50/p95 per request beside the
goal: the proxy's whole added latency is to stay within 5 ms at p95 for usual requests.

Usage: python bench/live_rewrite.py [--rounds 50,200,1000] [--repeat 50]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ctxtop.engine.proxy.live_plan import CompactCut, LivePlan, round_digest, save_plan  # noqa: E402
from ctxtop.engine.proxy.rewrite_live import LiveRewriter  # noqa: E402

GOAL_MS = 5.0


def request(rounds: int) -> bytes:
    messages: list[dict[str, object]] = [{"role": "user", "content": "Read the files."}]
    for number in range(rounds):
        call = f"toolu_{number:08d}"
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": "cat"}}
                ],
            }
        )
        result = {"type": "tool_result", "tool_use_id": call, "content": f"{number} " * 700}
        messages.append({"role": "user", "content": [result]})
    body = {"model": "claude-sonnet-4-5", "messages": messages, "max_tokens": 32000}
    return json.dumps(body, separators=(",", ":")).encode()


def plans(rounds: int) -> dict[str, LivePlan]:
    calls = [f"toolu_{n:08d}" for n in range(rounds)]
    common = {"session_id": "bench", "agent": "claude-code", "source": "", "source_sha256": ""}
    edit = LivePlan(
        kind="edit",
        created="",
        results={c: "[ctxtop: old tool result cleared (700 tokens).]" for c in calls[:-3]},
        **common,
    )
    digests = tuple(round_digest([], [call]) for call in calls[:-3])  # each round: one call
    cut = CompactCut("summary " * 400, digests, tuple(calls[:-3]), tuple(calls[-3:]), True)
    compact = LivePlan(kind="compact", created="", compact=cut, **common)
    return {"edit": edit, "compact": compact}


def timed(rewriter: LiveRewriter, session: str, body: bytes, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        rewriter("anthropic", session, body)
        times.append((time.perf_counter() - started) * 1000)
    return times


def line(label: str, times: list[float]) -> str:
    p50 = statistics.median(times)
    p95 = statistics.quantiles(times, n=20)[-1]
    verdict = "ok" if p95 <= GOAL_MS else "over"
    goal = f"(goal p95 <= {GOAL_MS} ms: {verdict})"
    return f"  {label:<22} p50 {p50:7.2f} ms   p95 {p95:7.2f} ms   {goal}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", default="50,200,1000")
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ctxtop-bench-") as data:
        os.environ["CTXTOP_DATA_DIR"] = data
        rewriter = LiveRewriter()
        for rounds in (int(n) for n in args.rounds.split(",")):
            body = request(rounds)
            print(f"{rounds} rounds, request {len(body) / 1e6:.2f} MB")
            print(line("no plan (lookup)", timed(rewriter, "bench-none", body, args.repeat)))
            for kind, plan in plans(rounds).items():
                save_plan(plan)
                print(line(f"{kind} applied", timed(rewriter, "bench", body, args.repeat)))


if __name__ == "__main__":
    main()

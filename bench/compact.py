"""Benchmark of ``ctxtop compact`` (structured summariser) on synthetic Claude Code sessions.

Builds Claude Code transcripts of the given sizes with bench/tail.py's generator (the bundled
samples repeated with fresh ids on one chain), then for each prints the wall time of a complete
``compact_session`` (read, cut, summary, fork rendered and read back; ``--dry-run``, so nothing
is written next to the file), the time of the summary alone, the rounds, the tokens before and
after, and the summary's tokens against its budget; once cold (tokenizer loaded, token counts
not cached yet) and once warm.

Usage: python bench/compact.py [--sizes-mb 1,10]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tail import build  # noqa: E402

from ctxtop.engine.forks import compact  # noqa: E402


def measure(path: Path, label: str) -> None:
    timings: list[float] = []
    original = compact.summarise

    def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            timings.append(time.perf_counter() - started)

    compact.summarise = timed  # type: ignore[assignment]
    try:
        started = time.perf_counter()
        outcome = compact.compact_session(path, keep_rounds=1, dry_run=True).as_json()
        total = time.perf_counter() - started
    finally:
        compact.summarise = original  # type: ignore[assignment]
    size = path.stat().st_size / 1e6
    print(
        f"{label:5s} {size:6.1f} MB  rounds {outcome['rounds']:5d}  compact {total:6.2f} s  "
        f"(summary {timings[0]:5.2f} s)  tokens {outcome['tokens_before']:,} -> "
        f"{outcome['tokens_after']:,}  summary {outcome['summary_tokens']:,} / "
        f"{outcome['budget']:,}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mb", default="1,10")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ctxtop-bench-compact-") as scratch:
        for text in args.sizes_mb.split(","):
            path = Path(scratch) / f"session-{text}mb.jsonl"
            build(path, int(float(text) * 1_000_000))
            measure(path, "cold")  # the first run loads the tokenizer and fills the count cache
            measure(path, "warm")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

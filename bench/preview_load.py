"""Benchmark of an edit preview's load: the CPU of ``load`` and of the first ``preview_edit``.

Builds a ~10 MB Claude Code session (bench/tail.py's generator, auto-compacted every window as
Claude Code does) and a ~10 MB Codex rollout (bench/tail_codex.py's), then for each prints the
CPU seconds (process time) of ``load`` and of ``load`` plus the first edit preview, the best and
the median of ``--runs`` runs: from the file, and from the session a dashboard holds (a
``LiveSession`` that read the file: the panels' ``load``). The tokenizer is loaded and the
on-disk count cache (in a temp dir) filled by a first run that is not counted: the figures are
the reads and decodes.

Usage: python bench/preview_load.py [--size-mb 10] [--runs 5]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import tail  # noqa: E402
import tail_codex  # noqa: E402


def cpu(job: Callable[[], object]) -> float:
    gc.collect()
    started = time.process_time()
    job()
    return time.process_time() - started


def measure(path: Path, label: str, runs: int) -> None:
    from ctxtop.engine.editing.policy import Policy
    from ctxtop.engine.forks.edit import preview_edit
    from ctxtop.engine.forks.transaction import EDITING, HeldSession, load
    from ctxtop.engine.live.session import LiveSession

    dashboard = LiveSession(path, analysis=False)
    dashboard.poll()
    size = path.stat().st_size / 1e6
    for source, held in (("file", None), ("dashboard", dashboard)):

        def loaded(held: HeldSession | None = held) -> object:
            return load(path, EDITING, None, held)

        def previewed(held: HeldSession | None = held) -> None:
            preview_edit(load(path, EDITING, None, held), Policy(keep_turns=1))

        previewed()  # the tokenizer loaded, the counts cached
        loads = [cpu(loaded) for _ in range(runs)]
        previews = [cpu(previewed) for _ in range(runs)]
        print(
            f"{label:12s} {size:5.1f} MB  from the {source:9s}  load {min(loads):.3f} s (median"
            f" {statistics.median(loads):.3f})  load + first preview {min(previews):.3f} s"
            f" (median {statistics.median(previews):.3f})"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=10)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    size = int(args.size_mb * 1e6)
    with tempfile.TemporaryDirectory() as folder:
        os.environ["CTXTOP_CACHE_DIR"] = str(Path(folder) / "cache")
        claude = Path(folder) / "claude-code.jsonl"
        tail.build(claude, size, compact_every=tail.WINDOW_BYTES)
        codex = Path(folder) / "rollout-2026-01-01T00-00-00-0000.jsonl"
        tail.build(codex, size, tail_codex.CodexGenerator)
        measure(claude, "claude-code", args.runs)
        measure(codex, "codex", args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

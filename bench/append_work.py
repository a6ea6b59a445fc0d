"""Per-append engine work on a 1 MB and a 100 MB Claude Code session, side by side.

Builds both sessions with bench/tail.py's generator (the bundled real Claude Code logs repeated
with fresh ids; auto-compactions where Claude Code makes them, about a 200k-token window of lines
apart, unless ``--no-compactions``), opens each in a ``LiveSession`` (what the dashboard's feed
drives), then appends the same lines to both, one at a time, interleaved so both see the same
background load, and times what the engine does per append: ``poll`` + ``figures()`` (the gauge)
and ``poll`` + ``view()`` (figures and the whole analysis: sections, prompt tree, forecast).

Prints p50/p95 per size and the ratio of the big file's p95 to the small one's; with
``--profile N``, then cProfile over as many more appends to the big file alone (poll + view), its
top N functions by own time (what grows with the history shows there).
Usage: python bench/append_work.py [--size-mb 100] [--appends 100] [--no-compactions] [--profile N]
Goal (issue 16): per-append work on 100 MB within 20 % of that on 1 MB.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from tail import WINDOW_BYTES, Generator, build  # noqa: E402

from ctxtop.engine.live.session import LiveSession  # noqa: E402


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[int(share * (len(ordered) - 1))]


def opened(path: Path) -> tuple[LiveSession, float]:
    started = time.perf_counter()
    live = LiveSession(path)
    live.poll()
    live.view()
    return live, time.perf_counter() - started


Times = tuple[list[float], list[float], list[float], list[float]]


def append_all(followers: list[tuple[Path, LiveSession, Generator]], appends: int) -> list[Times]:
    """Per follower: (poll + figures, poll + view) wall seconds per appended line, then the
    same in CPU seconds of this process (on a shared machine wall time waits for the others)."""
    out: list[Times] = [([], [], [], []) for _ in followers]
    for _, _, generator in followers:
        generator.index = len(generator.template)  # both sizes append the same kind of lines
    for round_ in range(appends):
        order = list(zip(followers, out, strict=True))
        for (path, live, generator), times in order if round_ % 2 else order[::-1]:
            figures, views, figures_cpu, views_cpu = times
            with path.open("ab") as handle:
                handle.write(generator.next_line())
            started, cpu = time.perf_counter(), time.process_time()
            live.poll()
            live.figures()
            figures.append(time.perf_counter() - started)
            figures_cpu.append(time.process_time() - cpu)
            with path.open("ab") as handle:
                handle.write(generator.next_line())
            started, cpu = time.perf_counter(), time.process_time()
            live.poll()
            live.view()
            views.append(time.perf_counter() - started)
            views_cpu.append(time.process_time() - cpu)
    return out


def profile_appends(follower: tuple[Path, LiveSession, Generator], appends: int, top: int) -> None:
    """cProfile over ``appends`` more appends (poll + view) to one follower; its top functions."""
    path, live, generator = follower
    profile = cProfile.Profile()
    for _ in range(appends):
        with path.open("ab") as handle:
            handle.write(generator.next_line())
        profile.enable()
        live.poll()
        live.view()
        profile.disable()
    print(f"profile of {appends} more appends to the big file (poll + view), by own time:")
    pstats.Stats(profile).sort_stats("tottime").print_stats(top)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=100.0)
    parser.add_argument("--appends", type=int, default=100)
    parser.add_argument("--no-compactions", action="store_true")
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    args = parser.parse_args()
    compact_every = None if args.no_compactions else WINDOW_BYTES
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="ctxtop-append-") as scratch:
        for name in ("CONFIG", "CACHE", "DATA"):
            os.environ[f"CTXTOP_{name}_DIR"] = str(Path(scratch) / name.lower())
        followers = []
        labels = []
        for label, size in (("1 MB", 1 << 20), (f"{args.size_mb:g} MB", int(args.size_mb * 2**20))):
            path = Path(scratch) / f"session-{label.replace(' ', '')}.jsonl"
            generator = build(path, size, compact_every=compact_every)
            live, seconds = opened(path)
            followers.append((path, live, generator))
            labels.append(label)
            print(f"{label:>7}: opened (read + figures + analysis) in {seconds:.2f} s")
        results = append_all(followers, args.appends)
        p95 = {}
        for label, (figures, views, figures_cpu, views_cpu) in zip(labels, results, strict=True):
            for what, values, cpu in (
                ("poll + figures", figures, figures_cpu),
                ("poll + analysis", views, views_cpu),
            ):
                p95[label, what] = percentile(values, 0.95)
                p95[label, what + " cpu"] = percentile(cpu, 0.95)
                print(
                    f"{label:>7}: {what:<16} p50 {1000 * statistics.median(values):7.2f} ms"
                    f"   p95 {1000 * p95[label, what]:7.2f} ms"
                    f"   (cpu p50 {1000 * statistics.median(cpu):7.2f} ms"
                    f"   p95 {1000 * percentile(cpu, 0.95):7.2f} ms)"
                )
        small, big = labels
        for what in (
            "poll + figures",
            "poll + analysis",
            "poll + figures cpu",
            "poll + analysis cpu",
        ):
            ratio = p95[big, what] / p95[small, what]
            verdict = "ok" if ratio <= 1.2 else "MISSED"
            print(f"{what}: {big} p95 / {small} p95 = {ratio:.2f} (goal <= 1.20: {verdict})")
        if args.profile:
            profile_appends(followers[-1], args.appends, args.profile)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark of the live dashboard: append-to-screen latency and idle CPU.

Runs the real app headless on a session file in a temp dir (the bundled demo session), then
appends 200 assistant responses one at a time, each with a bigger prompt, and measures the time
from the append to the app's own ``ViewApplied`` message carrying that response's fill (posted
once the widgets hold the new figures; the paint follows on the next frame), and to the one
carrying the analysis of it too (sections, prompt tree, forecast: the feed publishes the figures
first, then their analysis). Then it leaves the app idle and measures the process's CPU time (all
threads: UI, file watcher, feed).

Usage: python bench/live.py [--appends 200] [--idle 10] [--poll] [--session FILE] [--size-mb N]
(``--session``: start from a copy of FILE instead, e.g. the 100 MB file ``bench/tail.py --keep``
writes; ``--size-mb``: start from a Claude Code session of that size built by bench/tail.py's
generator, with Claude Code's auto-compactions.)
Targets (issue 6, issue 16 on a 100 MB session): first full screen (figures and their analysis)
<= 2 s, append -> screen p95 <= 100 ms, idle CPU < 2 %.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
DASHBOARD_IMPORTS = "import ctxtop.engine.cli.main, ctxtop.tui.launch, ctxtop.tui.app"


def from_bytecode() -> None:
    """Runs again from compiled bytecode, as after ``pip install``: with PYTHONDONTWRITEBYTECODE
    set (as on this machine) every run compiled the dashboard's modules (~0.1-0.3 s of CPU in the
    imports figure). The cache lives in the temp dir, filled by one untimed import."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get("PYTHONPYCACHEPREFIX"):
        return
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE")
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "ctxtop-bench-bytecode")
    subprocess.run([sys.executable, "-c", DASHBOARD_IMPORTS], cwd=ROOT, env=env, check=True)
    os.execve(sys.executable, [sys.executable, *sys.argv], env)


if __name__ == "__main__":
    from_bytecode()

from tail import WINDOW_BYTES, build  # noqa: E402

import ctxtop.engine.cli.main  # noqa: E402  (the path of ``ctxtop FILE``: CLI, launch, app)
import ctxtop.tui.launch  # noqa: E402, F401
from ctxtop.engine.live.demo import demo_lines  # noqa: E402
from ctxtop.tui.app import CtxtopApp  # noqa: E402
from ctxtop.tui.messages import ViewApplied  # noqa: E402

IMPORTS_CPU = time.process_time()  # the interpreter and the dashboard's imports


def response_lines(count: int) -> tuple[list[bytes], list[int]]:
    """``count`` new assistant responses (fresh ids, growing prompts) and each one's fill."""
    lines = demo_lines()
    template = next(json.loads(line) for line in reversed(lines) if b'"usage"' in line)
    parent = template["uuid"]
    out: list[bytes] = []
    tokens: list[int] = []
    for index in range(count):
        record = json.loads(json.dumps(template))
        record["uuid"] = str(uuid.uuid4())
        record["parentUuid"] = parent
        parent = record["uuid"]
        record["message"]["id"] = f"msg_bench_{index:04d}"
        usage = record["message"]["usage"]
        usage["cache_read_input_tokens"] += 400 * (index + 1)
        tokens.append(
            usage["input_tokens"]
            + usage["cache_creation_input_tokens"]
            + usage["cache_read_input_tokens"]
            + usage["output_tokens"]
        )
        out.append(json.dumps(record).encode() + b"\n")
    return out, tokens


async def measure(path: Path, appends: int, idle: float, use_watchfiles: bool) -> None:
    applied: list[tuple[int, float]] = []  # (tokens on the gauge, perf_counter when applied)
    analysed: list[tuple[int, float]] = []  # (tokens the analysis counted, the same)

    def hook(message: object) -> None:
        if isinstance(message, ViewApplied):
            applied.append((message.view.gauge.tokens, message.applied_at))
            analysis = message.view.analysis
            if analysis is not None:
                analysed.append((analysis.context_tokens, message.applied_at))

    lines, expected = response_lines(appends)
    cpu_app = time.process_time()
    app = CtxtopApp(path, use_watchfiles=use_watchfiles)
    async with app.run_test(size=(120, 40), message_hook=hook) as pilot:
        loading, cpu_loading = time.perf_counter(), time.process_time()
        while not applied:
            await pilot.pause(0.01)
        print(
            f"first figures on screen after {time.perf_counter() - loading:.2f} s"
            f" ({time.process_time() - cpu_loading:.2f} s CPU, all threads)"
        )
        while not analysed:
            await pilot.pause(0.01)
        first = time.perf_counter() - loading
        cpu = time.process_time() - cpu_loading
        verdict = "ok" if first <= 2 else "MISSED"
        print(
            f"first full screen (figures and analysis) after {first:.2f} s ({cpu:.2f} s CPU,"
            f" {IMPORTS_CPU + time.process_time() - cpu_app:.2f} s with the imports and app start)"
            f" (goal <= 2 s: {verdict})"
        )
        # The file watcher starts once the first figures are out; an append before it is up
        # waits for the next poll (up to the refresh interval). Measure the steady state.
        await pilot.pause(1.0)
        latencies: list[float] = []
        analysis_latencies: list[float] = []
        for line, tokens in zip(lines, expected, strict=True):
            with path.open("ab") as out:
                started = time.perf_counter()
                out.write(line)
            while not any(shown == tokens for shown, _ in analysed[-3:]):
                await asyncio.sleep(0.001)
            at = next(when for shown, when in applied if shown == tokens)
            latencies.append(at - started)
            at = next(when for shown, when in analysed if shown == tokens)
            analysis_latencies.append(at - started)
            await asyncio.sleep(0.02)
        await pilot.pause(1.0)  # settle before measuring idle
        cpu0, wall0 = time.process_time(), time.perf_counter()
        await asyncio.sleep(idle)
        cpu = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
    mode = "watchfiles" if use_watchfiles else "polling"
    ms = sorted(1000 * value for value in latencies)
    p95 = ms[int(0.95 * (len(ms) - 1))]
    for what, values in (("fill", ms), ("fill + analysis", analysis_latencies)):
        figures = sorted(1000 * value for value in values) if values is not ms else ms
        print(f"append -> ViewApplied with the {what}, over {len(figures)} appends ({mode}):")
        print(
            f"  p50 {statistics.median(figures):.1f} ms"
            f"   p95 {figures[int(0.95 * (len(figures) - 1))]:.1f} ms   max {figures[-1]:.1f} ms"
        )
    print(f"idle CPU over {idle:.0f} s: {100 * cpu:.2f} %")
    print(
        f"targets: p95 <= 100 ms {'ok' if p95 <= 100 else 'MISSED'};"
        f" idle CPU < 2 % {'ok' if cpu < 0.02 else 'MISSED'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=200)
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle to measure")
    parser.add_argument("--poll", action="store_true", help="poll instead of file notifications")
    parser.add_argument("--session", type=Path, help="start from a copy of this session file")
    parser.add_argument("--size-mb", type=float, help="start from a built session of this size")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="ctxtop-bench-") as folder:
        path = Path(folder) / "session.jsonl"
        for name in ("CONFIG", "CACHE", "DATA"):  # a first open: ctxtop's own dirs start empty
            os.environ[f"CTXTOP_{name}_DIR"] = str(Path(folder) / name.lower())
        if args.session:
            shutil.copyfile(args.session, path)
        elif args.size_mb:
            build(path, int(args.size_mb * 2**20), compact_every=WINDOW_BYTES)
        else:
            path.write_bytes(b"".join(demo_lines()))
        asyncio.run(measure(path, args.appends, args.idle, not args.poll))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

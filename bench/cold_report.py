"""Cold `ctxtop report --json` on big Claude Code sessions: a scaling table beside the goals.

For each size, builds a Claude Code session in a temp dir from the bundled real Claude Code logs
(bench/tail.py's generator: fresh uuids, message and tool call ids per copy, one parentUuid chain,
an auto-compaction each time the chain since the last one holds about a 200k-token window of lines,
as Claude Code compacts; ``--no-compactions`` builds one chain of the whole file instead, a context
no agent could send),
then runs `ctxtop report --json FILE` as a whole process (from compiled bytecode, as installed),
``--runs`` times, each with an empty token-count cache, config and data dir (a cold open: the
first time a file is opened), then ``--runs`` times more with the count cache the first run left
(a re-open: the tokenizer's counts come from the disk cache). Prints, per size: wall time, CPU
time (user + system) and peak RSS (ranges over the runs), time per MB (wall, and CPU: the steadier
figure on a shared machine, flat when the cost is linear), the peak RSS per line beyond the first
size's (B/line: what a line of history costs in memory), and the goals of issue 16. When ``npm``
can install ccusage 17 (into the temp dir, before any timing), the same file is also given to
`ccusage session --json --offline` in the layout it reads (CLAUDE_CONFIG_DIR/projects/P/ID.jsonl)
and timed the same way; it runs offline on loopback-free local files.

Usage: python bench/cold_report.py [--sizes 10,100,1000] [--runs 3] [--no-ccusage] [--no-reopen]
       [--no-compactions]
The files (1 GB for 1000) are deleted at the end.
Goals (issue 16): 100 MB <= 1.5 s and <= 300 MB peak RSS; 1 GB <= 12 s; time per MB flat.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from tail import WINDOW_BYTES, build  # noqa: E402

CTXTOP = Path(sys.executable).parent / "ctxtop"
GOALS = {100: "<= 1.5 s, <= 300 MB", 1000: "<= 12 s, MB not the file's"}


@dataclass
class Run:
    seconds: float
    peak_mb: float
    cpu: float  # user + system seconds: on a shared machine, wall time waits for the others


def timed(command: list[str], env: dict[str, str]) -> Run:
    """Wall time and peak RSS of one whole process (its own rusage, not the bench's)."""
    start = perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)}: exit {child.returncode}")
    return Run(seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime)


SAMPLE = (
    ROOT
    / "sample_sessions/claude-code/projects/-home-dev-demo-project"
    / "b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl"
)


def compile_bytecode(scratch: Path) -> None:
    """Runs from compiled bytecode, as after ``pip install``: PYTHONDONTWRITEBYTECODE may be set
    here, and every run would then compile the ~280 modules it imports (~0.1 s of CPU). The
    modules go to a cache in the temp dir, filled by one untimed report of a sample session."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(scratch / "bytecode")
    ctxtop_report(SAMPLE, Path(tempfile.mkdtemp(dir=scratch)))


def ctxtop_report(session: Path, home: Path) -> Run:
    """One `ctxtop report --json` with ctxtop's config, cache and data dirs under ``home``."""
    env = dict(os.environ)
    for name in ("CONFIG", "CACHE", "DATA"):
        env[f"CTXTOP_{name}_DIR"] = str(home / name.lower())
    return timed([str(CTXTOP), "report", "--json", str(session)], env)


def ctxtop_runs(
    session: Path, scratch: Path, runs: int, reopen: bool
) -> tuple[list[Run], list[Run]]:
    """Cold runs (each with empty dirs), then re-opens with the first cold run's count cache."""
    homes = [Path(tempfile.mkdtemp(dir=scratch)) for _ in range(runs)]
    try:
        cold = [ctxtop_report(session, home) for home in homes]
        warm = [ctxtop_report(session, homes[0]) for _ in range(runs if reopen else 0)]
    finally:
        for home in homes:
            shutil.rmtree(home)
    return cold, warm


def install_ccusage(scratch: Path) -> Path | None:
    """ccusage 17 installed from the npm registry into the temp dir (None if that fails)."""
    if shutil.which("npm") is None:
        return None
    prefix = scratch / "ccusage"
    done = subprocess.run(
        ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "ccusage@17"],
        capture_output=True,
        text=True,
    )
    binary = prefix / "node_modules" / ".bin" / "ccusage"
    return binary if done.returncode == 0 and binary.exists() else None


def ccusage_run(binary: Path, session: Path, scratch: Path) -> Run:
    home = scratch / "claude"
    project = home / "projects" / "-bench"
    project.mkdir(parents=True, exist_ok=True)
    link = project / session.name
    link.unlink(missing_ok=True)
    link.symlink_to(session)
    env = dict(os.environ, CLAUDE_CONFIG_DIR=str(home))
    try:
        return timed([str(binary), "session", "--json", "--offline"], env)
    finally:
        link.unlink()


def span(values: list[float], digits: int) -> str:
    low, high = min(values), max(values)
    return f"{low:.{digits}f}" if low == high else f"{low:.{digits}f}-{high:.{digits}f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000", help="sizes in MB, comma-separated")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-ccusage", action="store_true")
    parser.add_argument("--no-reopen", action="store_true", help="skip the warm-cache runs")
    parser.add_argument("--no-compactions", action="store_true", help="one chain, no compaction")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="ctxtop-cold-") as temp:
        scratch = Path(temp)
        compile_bytecode(scratch)
        ccusage = None if args.no_ccusage else install_ccusage(scratch)
        if not args.no_ccusage:
            print("ccusage 17:", "installed" if ccusage else "could not be installed (skipped)")
        header = f"{'size':>8} {'lines':>9} {'ctxtop s':>12} {'cpu s':>11} {'peak MB':>10}"
        header += f" {'s/MB':>13} {'cpu ms/MB':>11} {'B/line':>7}"
        header += f"  {'goal':<28}"
        if not args.no_reopen:
            header += f" {'reopen s':>12} {'reopen cpu':>11} {'reopen MB':>10}"
        if ccusage:
            header += f" {'ccusage s':>12} {'ccusage cpu':>12} {'ccusage MB':>11}"
        print(header)
        first: tuple[int, float] | None = None  # the first size's lines and least peak RSS
        for size in sizes:
            session = scratch / f"session-{size}mb.jsonl"
            build(session, size << 20, compact_every=None if args.no_compactions else WINDOW_BYTES)
            megabytes = session.stat().st_size / 2**20
            with session.open("rb") as lines:
                count = sum(1 for _ in lines)
            runs, reopens = ctxtop_runs(session, scratch, args.runs, not args.no_reopen)
            seconds = [run.seconds for run in runs]
            peak = min(run.peak_mb for run in runs)
            first = first or (count, peak)
            # What the process holds per line beyond the first size's (its memory per line of
            # the file: the goal is a small index, not the lines' content).
            per_line = (peak - first[1]) * 2**20 / (count - first[0]) if count > first[0] else 0
            row = (
                f"{megabytes:6.0f}MB {count:>9,} {span(seconds, 2):>12}"
                f" {span([run.cpu for run in runs], 2):>11}"
                f" {span([run.peak_mb for run in runs], 0):>10}"
                f" {span([s / megabytes for s in seconds], 4):>13}"
                f" {span([1000 * run.cpu / megabytes for run in runs], 1):>11}"
                f" {per_line:>7.0f}"
                f"  {GOALS.get(size, '-'):<28}"
            )
            if reopens:
                row += f" {span([run.seconds for run in reopens], 2):>12}"
                row += f" {span([run.cpu for run in reopens], 2):>11}"
                row += f" {span([run.peak_mb for run in reopens], 0):>10}"
            if ccusage:
                peers = [ccusage_run(ccusage, session, scratch) for _ in range(args.runs)]
                row += f" {span([run.seconds for run in peers], 2):>12}"
                row += f" {span([run.cpu for run in peers], 2):>12}"
                row += f" {span([run.peak_mb for run in peers], 0):>11}"
            print(row, flush=True)
            session.unlink()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

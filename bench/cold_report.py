"""Cold `ctxtop report --json` on big Claude Code sessions, beside ccusage 20's native binary.

For each size (100 MB by default), builds two Claude Code sessions in a temp dir from the bundled
real Claude Code logs (bench/tail.py's generator: fresh uuids, message and tool call ids per
copy): a realistic one, with an auto-compaction each time the chain since the last one holds
about a 200k-token window of lines (as Claude Code compacts), and one chain of the whole file with
no compaction (a context no agent could send; the reader's lean history reading cannot apply).
For each file it prints, ``--runs`` times (all runs, then the best):

- `ctxtop report --json FILE` as a whole process (from compiled bytecode, as installed), each run
  with an empty token-count cache, config and data dir (a cold open): wall and CPU seconds
  (user + system) and peak RSS;
- ccusage's `ccusage claude session --json --offline` on the same file, in the layout it reads
  (CLAUDE_CONFIG_DIR/projects/P/ID.jsonl, a hard link: its native build skips symlinks), timed
  the same way, interleaved with ctxtop's runs so both see the same load; the ratio is ccusage's
  time over ctxtop's (>= 1: ctxtop as fast or faster);
- ctxtop's fixed costs, which do not depend on the file (CPU seconds in fresh processes with
  empty dirs: Python's start with the reader's imports, the report's other imports, building the
  o200k tokenizer, loading genai-prices' dataset), beside ccusage's best whole run;
- the decode floor (msgspec decoding every line into Python values, nothing else) and ctxtop's
  own read of the file (``read_all``: what the open costs before the report is built), each in a
  process of its own, in CPU seconds, and the read's ratio to the floor.

ccusage 20 ships as the npm package ``ccusage`` (a small node launcher, src/cli.js) whose
optional dependency ``@ccusage/ccusage-<platform>-<arch>`` holds the native binary
(bin/ccusage); the launcher makes it executable and spawns it. It is installed at a pinned
version into the temp dir before any timing, and the native binary is timed directly (the
launcher would add a node start to each run).

Usage: python bench/cold_report.py [--sizes 100] [--runs 3] [--no-ccusage]
       [--kinds realistic,one-chain]
The files are deleted at the end.
Goals (issue 31): realistic file: ratio >= 1.0 against ccusage; one chain: read <= 3x the decode
floor; peak RSS <= 150 MB; figures unchanged.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter, process_time

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from tail import WINDOW_BYTES, build  # noqa: E402

CTXTOP = Path(sys.executable).parent / "ctxtop"
CCUSAGE = "ccusage@20.0.24"
KINDS = {"realistic": WINDOW_BYTES, "one-chain": None}  # compaction spacing in bytes


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


def cold_env(home: Path) -> dict[str, str]:
    """The environment with ctxtop's config, cache and data dirs under ``home``."""
    env = dict(os.environ)
    for name in ("CONFIG", "CACHE", "DATA"):
        env[f"CTXTOP_{name}_DIR"] = str(home / name.lower())
    return env


def ctxtop_report(session: Path, home: Path) -> Run:
    """One `ctxtop report --json` with ctxtop's config, cache and data dirs under ``home``."""
    return timed([str(CTXTOP), "report", "--json", str(session)], cold_env(home))


def cold_ctxtop(session: Path, scratch: Path) -> Run:
    home = Path(tempfile.mkdtemp(dir=scratch))
    try:
        return ctxtop_report(session, home)
    finally:
        shutil.rmtree(home)


def native_package() -> str | None:
    """The npm package holding ccusage's native binary for this machine (src/cli.js's table)."""
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "win32"}.get(platform.system())
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower()
    )
    return f"@ccusage/ccusage-{system}-{machine}" if system and machine else None


def install_ccusage(scratch: Path) -> Path | None:
    """ccusage 20's native binary, installed from the npm registry into the temp dir (None if
    that fails or no build exists for this machine)."""
    package = native_package()
    if shutil.which("npm") is None or package is None:
        return None
    prefix = scratch / "ccusage"
    done = subprocess.run(
        ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", CCUSAGE],
        capture_output=True,
        text=True,
    )
    binary = prefix / "node_modules" / package / "bin" / "ccusage"
    if done.returncode != 0 or not binary.exists():
        return None
    binary.chmod(0o755)  # (npm unpacks it without the execute bit; the launcher sets it)
    return binary


def ccusage_home(session: Path, scratch: Path) -> Path:
    """A CLAUDE_CONFIG_DIR holding ``session`` (a hard link, else a copy)."""
    home = scratch / f"claude-{session.stem}"
    project = home / "projects" / "-bench"
    project.mkdir(parents=True)
    target = project / SAMPLE.name  # a session id as a file name, as Claude Code writes
    try:
        os.link(session, target)
    except OSError:
        shutil.copyfile(session, target)
    return home


def ccusage_run(binary: Path, home: Path) -> Run:
    env = dict(os.environ, CLAUDE_CONFIG_DIR=str(home))
    return timed([str(binary), "claude", "session", "--json", "--offline"], env)


def measure(what: str, path: Path) -> None:
    """(In a fresh process) CPU seconds of the decode floor or of ctxtop's read, printed."""
    import gc

    import msgspec

    from ctxtop.engine.agents.session_reader import SessionReader, read_all

    if what == "fixed":
        print(" ".join(f"{seconds:.3f}" for seconds in fixed_costs()))
        return
    decode = msgspec.json.Decoder().decode
    started = process_time()
    if what == "floor":
        with path.open("rb") as handle:
            gc.disable()  # (as the reader decodes)
            for raw in handle:
                if raw.strip():
                    decode(raw)
    else:
        read_all(SessionReader(path))
    print(process_time() - started)


def fixed_costs() -> tuple[float, float, float]:
    """(In a fresh process, after the reader's imports) CPU seconds of what a cold report
    costs whatever the file: the rest of the report's imports, the o200k tokenizer, the
    genai-prices dataset (models' windows and prices)."""
    started = process_time()
    from ctxtop.engine.analysis import analyze, report  # noqa: F401
    from ctxtop.engine.cli import cmd_report  # noqa: F401
    from ctxtop.engine.sessions import report_json, sample  # noqa: F401

    imported = process_time()
    from ctxtop.engine.tokens.encoding import get_encoding

    get_encoding("o200k_base")
    tokenizer = process_time()
    from ctxtop.engine.models import dataset

    dataset.find("claude-sonnet-4-5")
    return imported - started, tokenizer - imported, process_time() - tokenizer


def fixed_line(scratch: Path, ccusage_best: float | None) -> str:
    """The fixed costs of a cold report (empty ctxtop dirs) beside the peer's whole run."""
    home = Path(tempfile.mkdtemp(dir=scratch))
    try:
        env = cold_env(home)
        reader = "import msgspec, ctxtop.engine.agents.session_reader"
        start = timed([sys.executable, "-c", reader], env).cpu
        command = [sys.executable, __file__, "--measure", "fixed", "-"]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    finally:
        shutil.rmtree(home)
    imports, tokenizer, prices = (float(x) for x in done.stdout.split())
    total = start + imports + tokenizer + prices
    line = (
        f"  ctxtop fixed   cpu s  {total:.2f} (start and reader {start:.2f}, other imports"
        f" {imports:.2f}, o200k {tokenizer:.2f}, prices {prices:.2f}: before any line is read)"
    )
    if ccusage_best is not None:
        line += f"; ccusage's best whole run {ccusage_best:.2f}"
    return line


def read_costs(session: Path) -> tuple[float, float]:
    """The decode floor and ctxtop's read, each in a process of its own (one run after the
    other in one process would find the heap grown already)."""
    costs = []
    for what in ("floor", "read"):
        done = subprocess.run(
            [sys.executable, __file__, "--measure", what, str(session)],
            capture_output=True,
            text=True,
            check=True,
        )
        costs.append(float(done.stdout))
    return costs[0], costs[1]


def each(values: list[float], digits: int) -> str:
    """All runs' values, then the best: "1.52 1.48 1.50 (1.48)"."""
    return " ".join(f"{value:.{digits}f}" for value in values) + f" ({min(values):.{digits}f})"


def report(kind: str, size: int, scratch: Path, runs: int, ccusage: Path | None) -> None:
    session = scratch / f"{kind}-{size}mb.jsonl"
    generator = build(session, size << 20, compact_every=KINDS[kind])
    megabytes = session.stat().st_size / 2**20
    home = ccusage_home(session, scratch) if ccusage else None
    mine: list[Run] = []
    peers: list[Run] = []
    reads: list[tuple[float, float]] = []
    for _ in range(runs):  # interleaved: each pair sees the same load
        mine.append(cold_ctxtop(session, scratch))
        if ccusage and home:
            peers.append(ccusage_run(ccusage, home))
        reads.append(read_costs(session))
    print(f"{kind}, {megabytes:.0f} MB, {generator.compactions} compactions:")
    print(f"  ctxtop report  wall s {each([r.seconds for r in mine], 2)}")
    print(f"                 cpu s  {each([r.cpu for r in mine], 2)}")
    print(f"                 peak MB {each([r.peak_mb for r in mine], 0)}")
    if peers:
        print(f"  ccusage        wall s {each([r.seconds for r in peers], 2)}")
        print(f"                 cpu s  {each([r.cpu for r in peers], 2)}")
        print(f"                 peak MB {each([r.peak_mb for r in peers], 0)}")
        ratios = [p.seconds / m.seconds for m, p in zip(mine, peers, strict=True)]
        cpu_ratios = [p.cpu / m.cpu for m, p in zip(mine, peers, strict=True)]
        best = min(r.seconds for r in peers) / min(r.seconds for r in mine)
        print(f"  ratio ccusage/ctxtop wall {' '.join(f'{r:.2f}' for r in ratios)}", end="")
        print(f" (best/best {best:.2f}); cpu {' '.join(f'{r:.2f}' for r in cpu_ratios)}")
    print(fixed_line(scratch, min(r.cpu for r in peers) if peers else None))
    floors, read = [f for f, _ in reads], [r for _, r in reads]
    print(f"  decode floor   cpu s  {each(floors, 2)}")
    print(f"  ctxtop read    cpu s  {each(read, 2)}")
    print(f"  read/floor            {' '.join(f'{r / f:.2f}' for f, r in reads)}", flush=True)
    session.unlink()
    if home:
        shutil.rmtree(home)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100", help="sizes in MB, comma-separated")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--kinds", default=",".join(KINDS), help="realistic, one-chain")
    parser.add_argument("--no-ccusage", action="store_true")
    parser.add_argument("--measure", nargs=2, help=argparse.SUPPRESS)  # floor|read FILE
    args = parser.parse_args()
    if args.measure:
        measure(args.measure[0], Path(args.measure[1]))
        return 0
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="ctxtop-cold-") as temp:
        scratch = Path(temp)
        compile_bytecode(scratch)
        ccusage = None if args.no_ccusage else install_ccusage(scratch)
        if not args.no_ccusage:
            print(f"{CCUSAGE} native:", ccusage or "could not be installed (skipped)")
        for size in [int(size) for size in args.sizes.split(",")]:
            for kind in args.kinds.split(","):
                report(kind, size, scratch, args.runs, ccusage)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Renderer benchmark: `ctxtop render` against the real @vscode/prompt-tsx, on the same machine.

Two workloads:
  (a) the golden random cases (tests/render/golden/random-words, 4,000 cases, words tokenizer),
      measured once;
  (b) a synthetic coding-agent prompt (bench/agent_tree.py: 2,000 rounds, 6,702 messages
      and 978,666 o200k tokens) pruned to a 200,000-token budget with o200k, measured --runs
      times (default 3), ours and the library's side by side in each run.
Ours is the whole `ctxtop render --jsonl` process (wall clock: Python start, imports, loading the
o200k ranks, reading, rendering, writing), in prompt-tsx and exact mode. It runs from compiled
bytecode, as after `pip install` (a first, untimed run compiles it into a temporary cache, since
PYTHONDONTWRITEBYTECODE may be set); one run without that cache is printed too.
CPU time is printed beside each wall-clock figure, as the machine may be shared.
The library's figure is the render calls only, inside node (bench/ptsx/time_render.mjs, which
needs a copy of the ptsx oracle with node_modules: CTXTOP_PTSX_ORACLE or --oracle). Outputs of
both in prompt-tsx mode are compared on messages, tokenCount, pruned ids, budgets, Expandable
calls and error type. Without node or the oracle, only our figures are printed.

Usage: python bench/render.py [--oracle DIR] [--rounds 2000] [--budget 200000] [--runs 3]
                              [--skip-random]
Goal (issue 31; 10x in issue 16): on (b), ctxtop's whole process at least 20x faster than the
library's render call, in every run on a quiet machine (prompt-tsx mode, output identical).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from agent_tree import agent_tree  # noqa: E402

RANDOM_CASES = ROOT / "tests" / "render" / "golden" / "random-words.cases.jsonl.gz"
TIME_RENDER = ROOT / "bench" / "ptsx" / "time_render.mjs"
MODES = ("prompt-tsx", "exact")
GOAL = 20.0  # issue 31: ctxtop whole process vs the library's render call, on (b)


@dataclass
class Run:
    seconds: float
    cpu_seconds: float
    results: list[dict[str, Any]]
    failure: str = ""


def ctxtop_command() -> list[str]:
    installed = Path(sys.executable).parent / "ctxtop"
    if installed.exists():
        return [str(installed)]
    found = shutil.which("ctxtop")
    return [found] if found else [sys.executable, "-m", "ctxtop.tui.cli"]


def ctxtop_env(bytecode_cache: Path | None) -> dict[str, str]:
    """The environment of our runs: with a bytecode cache, compiled modules are written there
    on the first run and read on the next ones (as from an installed package)."""
    env = dict(os.environ)
    if bytecode_cache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(bytecode_cache)
    return env


def run_ours(
    cases: Path,
    tokenizer: str,
    mode: str,
    bytecode_cache: Path | None = None,
    count_cache: Path | None = None,
) -> Run:
    """``count_cache``: ctxtop's cache dir for this run (a fresh one: no counts remembered)."""
    command = [*ctxtop_command(), "render", "--jsonl", "--mode", mode, "--tokenizer", tokenizer]
    env = ctxtop_env(bytecode_cache)
    if count_cache is not None:
        env["CTXTOP_CACHE_DIR"] = str(count_cache)
    with cases.open("rb") as stdin:
        cpu_start = children_cpu_seconds()
        start = time.perf_counter()
        done = subprocess.run(command, stdin=stdin, capture_output=True, env=env, check=False)
        seconds = time.perf_counter() - start
        cpu = children_cpu_seconds() - cpu_start
    if done.returncode != 0:
        last = (done.stderr.decode(errors="replace").strip().splitlines() or ["no message"])[-1]
        return Run(seconds, cpu, [], f"exit {done.returncode}: {last}")
    results = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return Run(seconds, cpu, results)


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def oracle_problem(oracle: Path | None) -> str:
    if shutil.which("node") is None:
        return "node is not installed"
    if oracle is None:
        return "no oracle given (set CTXTOP_PTSX_ORACLE or pass --oracle)"
    if not (oracle / "oracle.mjs").is_file() or not (oracle / "node_modules").is_dir():
        return f"{oracle} is not a ptsx oracle copy with node_modules (run npm ci there)"
    return ""


def run_library(cases: Path, oracle: Path, out: Path) -> tuple[dict[str, Any], Run]:
    env = {**os.environ, "CTXTOP_PTSX_ORACLE": str(oracle)}
    with cases.open("rb") as stdin:
        done = subprocess.run(
            ["node", str(TIME_RENDER), "--out", str(out)],
            stdin=stdin,
            capture_output=True,
            env=env,
            check=False,
        )
    if done.returncode != 0:
        return {}, Run(0.0, 0.0, [], done.stderr.decode(errors="replace").strip()[-300:])
    summary: dict[str, Any] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    results = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    return summary, Run(summary["renderMs"] / 1000, summary["renderCpuMs"] / 1000, results)


def differing_fields(ours: dict[str, Any], library: dict[str, Any]) -> list[str]:
    def error_type(result: dict[str, Any]) -> Any:
        return (result.get("error") or {}).get("type")

    fields = ["tokenCount", "messages", "pruned", "budgets", "expandableCalls"]
    differing = [field for field in fields if ours.get(field) != library.get(field)]
    if error_type(ours) != error_type(library):
        differing.append("error")
    return differing


def compare(ours: Run, library: Run) -> str:
    if ours.failure or library.failure or not ours.results:
        return "not compared"
    if len(ours.results) != len(library.results):
        return f"DIFFERENT: {len(ours.results)} results vs {len(library.results)}"
    differing = [
        differing_fields(o, lib) for o, lib in zip(ours.results, library.results, strict=True)
    ]
    same = sum(1 for fields in differing if not fields)
    if same == len(differing):
        return f"identical ({same}/{same} results)"
    counts: dict[str, int] = {}
    for fields in differing:
        for field in fields:
            counts[field] = counts.get(field, 0) + 1
    return f"DIFFERENT: {same}/{len(differing)} results identical; differing fields {counts}"


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def row(label: str, value: str) -> None:
    print(f"  {label:<44} {value}")


def ours_rows(ours: dict[str, Run]) -> None:
    for mode, run in ours.items():
        figure = f"{run.seconds:8.3f} s   cpu {run.cpu_seconds:8.3f} s"
        row(
            f"ctxtop render --jsonl --mode {mode}",
            figure + (f"  FAILED ({run.failure})" if run.failure else ""),
        )


def measure_library(
    cases: Path, oracle: Path | None, work: Path
) -> tuple[dict[str, Any], Run | None]:
    """The library's render calls on ``cases``, its rows printed; None if not measured."""
    problem = oracle_problem(oracle)
    if problem or oracle is None:
        row("@vscode/prompt-tsx", f"not measured: {problem}")
        return {}, None
    summary, library = run_library(cases, oracle, work / f"library-{cases.stem}.jsonl")
    if library.failure:
        row("@vscode/prompt-tsx", f"FAILED: {library.failure}")
        return {}, None
    row(
        "@vscode/prompt-tsx render calls (node)",
        f"{library.seconds:8.3f} s   cpu {library.cpu_seconds:8.3f} s",
    )
    row("  (oracle renderTree incl. instrumentation)", f"{summary['oracleMs'] / 1000:8.3f} s")
    if summary["plainMismatches"]:
        row("  plain vs instrumented library renders", f"{summary['plainMismatches']} differ")
    return summary, library


def speedup_rows(ours: dict[str, Run], library: Run) -> None:
    for mode, run in ours.items():
        if not run.failure:
            ratios = library.seconds / run.seconds, library.cpu_seconds / run.cpu_seconds
            row(f"speed-up ({mode} mode)", f"{ratios[0]:8.1f}x   cpu {ratios[1]:8.1f}x")


@dataclass
class Measured:
    """One run of (b): our whole process (per mode) and the library's render call."""

    ours: dict[str, Run]
    library: Run | None


def side_by_side(
    cases: Path, tokenizer: str, oracle: Path | None, work: Path, cache: Path
) -> Measured:
    """Ours in both modes, then the library's render calls, on ``cases``; rows printed."""
    ours = {mode: run_ours(cases, tokenizer, mode, cache) for mode in MODES}
    ours_rows(ours)
    _, library = measure_library(cases, oracle, work)
    if library is not None:
        speedup_rows(ours, library)
        row("outputs, prompt-tsx mode vs library", compare(ours["prompt-tsx"], library))
    return Measured(ours, library)


def random_benchmark(cases: Path, count: int, oracle: Path | None, work: Path, cache: Path) -> None:
    print(f"(a) {count:,} random cases (golden random-words, words tokenizer), one run")
    side_by_side(cases, "words", oracle, work, cache)


def agent_benchmark(
    title: str, case: Path, oracle: Path | None, work: Path, cache: Path, runs: int
) -> list[Measured]:
    print(title)
    uncached = run_ours(case, "o200k", "prompt-tsx")
    row(
        "ctxtop, prompt-tsx, no bytecode cache",
        f"{uncached.seconds:8.3f} s   cpu {uncached.cpu_seconds:8.3f} s"
        + ("" if not uncached.failure else f"  FAILED ({uncached.failure})"),
    )
    # The runs below re-render a tree rendered before, so its token counts are remembered
    # (engine/render/count_memory.py); this one starts from an empty cache, as a first render.
    for number in range(1, runs + 1):
        first = run_ours(case, "o200k", "prompt-tsx", cache, work / f"empty-cache-{number}")
        row(
            f"ctxtop, prompt-tsx, first render (no counts remembered) {number}",
            f"{first.seconds:8.3f} s   cpu {first.cpu_seconds:8.3f} s"
            + ("" if not first.failure else f"  FAILED ({first.failure})"),
        )
    measured: list[Measured] = []
    for number in range(1, runs + 1):
        print(f" run {number} of {runs} (the tree rendered before: its counts remembered)")
        measured.append(side_by_side(case, "o200k", oracle, work, cache))
    return measured


def spread(values: list[float], unit: str, digits: int = 2) -> str:
    low, high = min(values), max(values)
    if len(values) == 1:
        return f"{low:.{digits}f}{unit}"
    return f"{low:.{digits}f}-{high:.{digits}f}{unit}"


def summary_rows(measured: list[Measured]) -> None:
    """Ranges over the runs, ours beside the library's, and the goal."""
    print(f" over {len(measured)} runs (wall clock; cpu in brackets)")
    for mode in MODES:
        runs = [m.ours[mode] for m in measured if not m.ours[mode].failure]
        if runs:
            row(
                f"ctxtop whole process, {mode}",
                f"{spread([r.seconds for r in runs], ' s')}"
                f"  ({spread([r.cpu_seconds for r in runs], ' s')})",
            )
    compared = [m for m in measured if m.library is not None]
    if not compared:
        print(f"goal (issue 31): >= {GOAL:g}x the library's render call: not measured")
        return
    libraries = [m.library for m in compared if m.library is not None]
    row(
        "@vscode/prompt-tsx render call",
        f"{spread([r.seconds for r in libraries], ' s')}"
        f"  ({spread([r.cpu_seconds for r in libraries], ' s')})",
    )
    for mode in MODES:
        pairs = [(m.ours[mode], m.library) for m in compared if not m.ours[mode].failure]
        ratios = [lib.seconds / run.seconds for run, lib in pairs if lib is not None]
        cpu_ratios = [lib.cpu_seconds / run.cpu_seconds for run, lib in pairs if lib is not None]
        if ratios:
            met = sum(1 for ratio in ratios if ratio >= GOAL)
            row(
                f"speed-up, {mode} mode",
                f"{spread(ratios, 'x', 1)}  (cpu {spread(cpu_ratios, 'x', 1)})"
                f"   goal >= {GOAL:g}x: met in {met} of {len(ratios)} runs",
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oracle", type=Path, default=os.environ.get("CTXTOP_PTSX_ORACLE"))
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--budget", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3, help="runs of (b), side by side")
    parser.add_argument("--skip-random", action="store_true", help="measure (b) only")
    args = parser.parse_args()
    oracle = Path(args.oracle).resolve() if args.oracle else None
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=False)
    print(
        f"machine: {os.cpu_count()} cpus, python {sys.version.split()[0]}, "
        f"node {node.stdout.strip() if shutil.which('node') else 'absent'}, "
        f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )

    with tempfile.TemporaryDirectory(prefix="ctxtop-bench-render-") as tmp:
        work = Path(tmp)
        os.environ["CTXTOP_CACHE_DIR"] = str(work / "ctxtop-cache")  # not the user's own
        cache = work / "pycache"
        tree = agent_tree(args.rounds)
        messages = sum(len(r["children"]) for r in tree["root"][1]["children"]) + 2
        case = {"id": f"agent-{args.rounds}", "tokenizer": "o200k", "budget": args.budget}
        full = write_lines(
            work / "agent-full.jsonl", [json.dumps({**case, "budget": "max", "tree": tree})]
        )
        unpruned = run_ours(full, "o200k", "prompt-tsx", cache)  # also fills the bytecode cache
        size = f"{unpruned.results[0]['tokenCount']:,}" if unpruned.results else "?"
        agent_case = write_lines(work / "agent.jsonl", [json.dumps({**case, "tree": tree})])

        if not args.skip_random:
            random_lines = gzip.decompress(RANDOM_CASES.read_bytes()).decode().splitlines()
            random_cases = write_lines(work / "random.jsonl", random_lines)
            random_benchmark(random_cases, len(random_lines), oracle, work, cache)

        measured = agent_benchmark(
            f"(b) agent tree: {args.rounds:,} rounds, {messages:,} messages, {size} o200k tokens"
            f" (unpruned, by ctxtop), budget {args.budget:,}",
            agent_case,
            oracle,
            work,
            cache,
            max(1, args.runs),
        )
        last = measured[-1]
        for name, run in (("ctxtop", last.ours["prompt-tsx"]), ("prompt-tsx", last.library)):
            if run and run.results and "tokenCount" in run.results[0]:
                result = run.results[0]
                row(
                    f"{name} result",
                    f"{result['tokenCount']:,} tokens, {len(result['messages']):,} messages, "
                    f"{len(result['pruned']):,} ids pruned",
                )
        summary_rows(measured)


if __name__ == "__main__":
    main()

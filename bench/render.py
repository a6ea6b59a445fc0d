"""Renderer benchmark: `ctxtop render` against the real @vscode/prompt-tsx, on the same machine.

Two workloads, each measured once:
  (a) the golden random cases (tests/render/golden/random-words, 4,000 cases, words tokenizer);
  (b) a synthetic coding-agent prompt (bench/agent_tree.py: 2,000 rounds, 6,702 messages
      and 978,666 o200k tokens) pruned to a 200,000-token budget with o200k.
Ours is the whole `ctxtop render --jsonl` process (wall clock), in prompt-tsx and exact mode.
CPU time is printed beside each wall-clock figure, as the machine may be shared.
The library's figure is the render calls only, inside node (bench/ptsx/time_render.mjs, which
needs a copy of the ptsx oracle with node_modules: CTXTOP_PTSX_ORACLE or --oracle). Outputs of
both in prompt-tsx mode are compared on messages, tokenCount, pruned ids, budgets, Expandable
calls and error type. Without node or the oracle, only our figures are printed.

Usage: python bench/render.py [--oracle DIR] [--rounds 2000] [--budget 200000]
Target (issue 4): ours at least 5x faster than the library on (b).
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
    return [found] if found else [sys.executable, "-m", "tui.cli"]


def run_ours(cases: Path, tokenizer: str, mode: str) -> Run:
    command = [*ctxtop_command(), "render", "--jsonl", "--mode", mode, "--tokenizer", tokenizer]
    with cases.open("rb") as stdin:
        cpu_start = children_cpu_seconds()
        start = time.perf_counter()
        done = subprocess.run(command, stdin=stdin, capture_output=True, check=False)
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


def benchmark(
    title: str, cases: Path, tokenizer: str, oracle: Path | None, work: Path
) -> tuple[Run, Run | None]:
    print(title)
    ours = {mode: run_ours(cases, tokenizer, mode) for mode in MODES}
    for mode, run in ours.items():
        figure = f"{run.seconds:8.3f} s   cpu {run.cpu_seconds:8.3f} s"
        row(
            f"ctxtop render --jsonl --mode {mode}",
            figure + (f"  FAILED ({run.failure})" if run.failure else ""),
        )
    problem = oracle_problem(oracle)
    if problem or oracle is None:
        row("@vscode/prompt-tsx", f"not measured: {problem}")
        return ours["prompt-tsx"], None
    summary, library = run_library(cases, oracle, work / f"library-{cases.stem}.jsonl")
    if library.failure:
        row("@vscode/prompt-tsx", f"FAILED: {library.failure}")
        return ours["prompt-tsx"], None
    row(
        "@vscode/prompt-tsx render calls (node)",
        f"{library.seconds:8.3f} s   cpu {library.cpu_seconds:8.3f} s",
    )
    row("  (oracle renderTree incl. instrumentation)", f"{summary['oracleMs'] / 1000:8.3f} s")
    if summary["plainMismatches"]:
        row("  plain vs instrumented library renders", f"{summary['plainMismatches']} differ")
    for mode, run in ours.items():
        if not run.failure:
            ratios = library.seconds / run.seconds, library.cpu_seconds / run.cpu_seconds
            row(f"speed-up ({mode} mode)", f"{ratios[0]:8.1f}x   cpu {ratios[1]:8.1f}x")
    row("outputs, prompt-tsx mode vs library", compare(ours["prompt-tsx"], library))
    return ours["prompt-tsx"], library


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oracle", type=Path, default=os.environ.get("CTXTOP_PTSX_ORACLE"))
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--budget", type=int, default=200_000)
    args = parser.parse_args()
    oracle = Path(args.oracle).resolve() if args.oracle else None
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=False)
    print(
        f"machine: {os.cpu_count()} cpus, python {sys.version.split()[0]}, "
        f"node {node.stdout.strip() if shutil.which('node') else 'absent'}"
    )

    with tempfile.TemporaryDirectory(prefix="ctxtop-bench-render-") as tmp:
        work = Path(tmp)
        random_lines = gzip.decompress(RANDOM_CASES.read_bytes()).decode().splitlines()
        random_cases = write_lines(work / "random.jsonl", random_lines)
        benchmark(
            f"(a) {len(random_lines):,} random cases (golden random-words, words tokenizer)",
            random_cases,
            "words",
            oracle,
            work,
        )

        tree = agent_tree(args.rounds)
        messages = sum(len(r["children"]) for r in tree["root"][1]["children"]) + 2
        case = {"id": f"agent-{args.rounds}", "tokenizer": "o200k", "budget": args.budget}
        full = write_lines(
            work / "agent-full.jsonl", [json.dumps({**case, "budget": "max", "tree": tree})]
        )
        unpruned = run_ours(full, "o200k", "prompt-tsx")
        size = f"{unpruned.results[0]['tokenCount']:,}" if unpruned.results else "?"
        agent_case = write_lines(work / "agent.jsonl", [json.dumps({**case, "tree": tree})])
        ours, library = benchmark(
            f"(b) agent tree: {args.rounds:,} rounds, {messages:,} messages, {size} o200k tokens"
            f" (unpruned, by ctxtop), budget {args.budget:,}",
            agent_case,
            "o200k",
            oracle,
            work,
        )
        for name, run in (("ctxtop", ours), ("prompt-tsx", library)):
            if run and run.results and "tokenCount" in run.results[0]:
                result = run.results[0]
                row(
                    f"{name} result",
                    f"{result['tokenCount']:,} tokens, {len(result['messages']):,} messages, "
                    f"{len(result['pruned']):,} ids pruned",
                )
        print("target: ctxtop >= 5x faster than the library on (b)")


if __name__ == "__main__":
    main()

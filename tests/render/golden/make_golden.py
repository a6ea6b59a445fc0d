#!/usr/bin/env python3
"""Re-create the golden prompt-tsx data of tests/render/golden from a copy of the ptsx oracle.

    cp -r <ptsx-oracle> /tmp/ptsx-oracle && (cd /tmp/ptsx-oracle && npm ci)
    python3 tests/render/golden/make_golden.py /tmp/ptsx-oracle

Needs node (>= 18) and the oracle's node_modules; stdlib Python only. Every group is written as two
gzip'd JSONL files next to this script: <group>.cases.jsonl.gz (the input lines `render --jsonl`
reads: id, tokenizer, budget, tree) and <group>.expected.jsonl.gz (the oracle's result lines, in
the same order). The gzip header carries no timestamp, so re-running with the same oracle gives
byte-identical files. manifest.json records what each group holds.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLE_TOKENIZERS = ("words", "o200k")

# (group, tokenizer, seeds, trees per seed, budgets per tree, gen_random feature list or None = all)
RANDOM_GROUPS = (
    ("random-words", "words", range(1, 9), 125, 4, None),
    (
        "random-words-flex",
        "words",
        (301, 302),
        100,
        4,
        "text,textchunk,breakon,elem,pass,tokenlimit,ifempty,flex,reserve,fill,echo,expandable,br",
    ),
    ("random-o200k", "o200k", (101, 102, 103, 104), 125, 3, None),
    ("random-cl100k", "cl100k", (201,), 100, 3, None),
)


def run_node(oracle: Path, args: list[str], stdin: bytes = b"") -> bytes:
    done = subprocess.run(
        ["node", *args], cwd=oracle, input=stdin, capture_output=True, check=False
    )
    if done.returncode != 0:
        sys.exit(f"node {' '.join(args)} failed:\n{done.stderr.decode(errors='replace')}")
    return done.stdout


def render_with_oracle(oracle: Path, case_lines: list[str]) -> list[dict[str, object]]:
    out = run_node(oracle, ["render.mjs", "--jsonl"], ("\n".join(case_lines) + "\n").encode())
    results = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
    if len(results) != len(case_lines):
        sys.exit(f"oracle returned {len(results)} results for {len(case_lines)} cases")
    for result in results:
        if "usageError" in result:
            sys.exit(f"oracle rejected a case: {result}")
    return results


def write_gzip_lines(path: Path, lines: list[str]) -> None:
    data = ("\n".join(lines) + "\n").encode()
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
        gz.write(data)
    tmp.replace(path)


def write_group(
    oracle: Path, name: str, cases: list[dict[str, object]], manifest: dict[str, object]
) -> list[dict[str, object]]:
    case_lines = [json.dumps(c, ensure_ascii=False, separators=(",", ":")) for c in cases]
    results = render_with_oracle(oracle, case_lines)
    result_lines = [json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in results]
    write_gzip_lines(HERE / f"{name}.cases.jsonl.gz", case_lines)
    write_gzip_lines(HERE / f"{name}.expected.jsonl.gz", result_lines)
    pruning = sum(1 for r in results if r.get("pruned"))
    errors = Counter(str(r["error"]["type"]) for r in results if "error" in r)  # type: ignore[index]
    manifest[name] = {
        "cases": len(cases),
        "tokenizers": dict(Counter(str(c["tokenizer"]) for c in cases)),
        "cases_with_pruning": pruning,
        "errors": dict(errors),
    }
    print(f"{name}: {len(cases)} cases, {pruning} prune something, errors {dict(errors)}")
    return results


def example_docs(oracle: Path) -> list[tuple[str, dict[str, object]]]:
    files = sorted((oracle / "examples").glob("[0-9]*.json"))
    return [(f.stem, json.loads(f.read_text())) for f in files]


def check_examples_match_oracle_expectations(oracle: Path, name: str, results: list[dict]) -> None:
    # The oracle ships its own expected outputs; ours must be the same renders.
    by_file: dict[str, list[dict]] = {}
    for r in results:
        stem = str(r["id"]).rsplit("@", 1)[0]
        by_file.setdefault(stem, []).append({k: v for k, v in r.items() if k != "id"})
    for stem, got in by_file.items():
        shipped = json.loads((oracle / "examples" / "expected" / f"{stem}.json").read_text())
        if shipped != got:
            sys.exit(f"{name}: oracle output for {stem} differs from examples/expected")


def example_groups(oracle: Path, manifest: dict[str, object]) -> None:
    for tokenizer in EXAMPLE_TOKENIZERS:
        cases: list[dict[str, object]] = []
        for stem, doc in example_docs(oracle):
            for budget in doc.get("checkBudgets") or [doc.get("budget", "max")]:  # type: ignore[union-attr]
                cases.append(
                    {
                        "id": f"{stem}.{tokenizer}@{budget}",
                        "tokenizer": tokenizer,
                        "budget": budget,
                        "tree": doc,
                    }
                )
        name = f"examples-{tokenizer}"
        results = write_group(oracle, name, cases, manifest)
        check_examples_match_oracle_expectations(oracle, name, results)


def sweep_groups(oracle: Path, manifest: dict[str, object]) -> None:
    # Every budget from the unpruned count down to 0, like `render.mjs --sweep`.
    for tokenizer in EXAMPLE_TOKENIZERS:
        full_cases = [
            {"id": stem, "tokenizer": tokenizer, "budget": "max", "tree": doc}
            for stem, doc in example_docs(oracle)
        ]
        full_lines = [json.dumps(c, ensure_ascii=False) for c in full_cases]
        cases: list[dict[str, object]] = []
        for case, full in zip(full_cases, render_with_oracle(oracle, full_lines), strict=True):
            if "error" in full:
                continue
            for budget in range(int(full["tokenCount"]), -1, -1):  # type: ignore[call-overload]
                cases.append({**case, "id": f"{case['id']}.{tokenizer}@{budget}", "budget": budget})
        write_group(oracle, f"examples-sweep-{tokenizer}", cases, manifest)


def random_groups(oracle: Path, manifest: dict[str, object]) -> None:
    for name, tokenizer, seeds, count, budgets, features in RANDOM_GROUPS:
        cases = []
        for seed in seeds:
            args = ["gen_random.mjs", "--seed", str(seed), "--count", str(count)]
            args += ["--budgets", str(budgets), "--tokenizer", tokenizer]
            if features:
                args += ["--features", features]
            cases += [json.loads(line) for line in run_node(oracle, args).decode().splitlines()]
        write_group(oracle, name, cases, manifest)


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: make_golden.py PATH_TO_PTSX_ORACLE (with node_modules installed)")
    oracle = Path(sys.argv[1]).resolve()
    if not (oracle / "render.mjs").is_file() or not (oracle / "node_modules").is_dir():
        sys.exit(f"{oracle}: not a ptsx oracle copy with node_modules (run npm ci there)")
    library = json.loads(
        (oracle / "node_modules" / "@vscode" / "prompt-tsx" / "package.json").read_text()
    )["version"]
    manifest: dict[str, object] = {}
    example_groups(oracle, manifest)
    sweep_groups(oracle, manifest)
    random_groups(oracle, manifest)
    doc = {"library": f"@vscode/prompt-tsx@{library}", "groups": manifest}
    (HERE / "manifest.json").write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""Per session: how many requests' simulated cache read and write are within 5 % of what the API
logged, counted over every request of the session, not only those on the live context.

ctxtop simulates the live context's requests (since the last compaction); the requests before it
are shown as logged. To measure the simulation on every request, each session file is read as it
stood just before each of its compactions (a copy cut there, its sub-agent folder beside it) and
once whole: every request is then simulated in the cut whose live context holds it, exactly as
the dashboard showed it at the time. Sub-agents are simulated with their parent and the other
sub-agents as the shared cache (as ctxtop does), once, on the whole file.

Usage:
  python bench/cache_real.py [--verbose] [--misses] [--json] SESSION_FILE_OR_DIR ...
  python bench/cache_real.py --compare OTHER_CHECKOUT SESSION_FILE_OR_DIR ...

``--compare`` runs the same measure with another checkout of ctxtop (e.g. main, for "before") and
prints both per session. Target (issue 25): at least 95 % of requests within 5 %.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__" and "--compare" not in sys.argv:
    sys.path.insert(0, str(os.environ.get("CTXTOP_ROOT", ROOT)))

Row = tuple[int, int, int, int]  # simulated read, write; logged read, write
# session file -> part ("main", "agent <id>") -> {"requests", "both", "read", "write", "misses"}
Results = dict[str, dict[str, dict[str, Any]]]


def main_files(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(
                p
                for p in sorted(path.rglob("*.jsonl"))
                if not p.name.startswith("agent-") and "subagents" not in p.parts
            )
        else:
            found.append(path)
    return found


def _analyze(path: Path, *, subagents: bool) -> tuple[list[int], dict[str, dict[int, Row]]]:
    """The session's compaction lines, and per part its simulated requests by line."""
    from ctxtop.engine.agents.session_reader import SessionReader, read_all
    from ctxtop.engine.analysis.analyze import Analyzer
    from ctxtop.engine.analysis.profiles import load_profile
    from ctxtop.engine.analysis.setup import setup_for
    from ctxtop.engine.config import Thresholds
    from ctxtop.engine.sessions.ledger import encoding_for

    reader = SessionReader(path)
    read_all(reader)
    assert reader.adapter is not None
    state = reader.adapter.snapshot()
    profile = load_profile(reader.adapter.profile)
    parts = [("main", state)]
    if subagents:
        parts += [(f"agent {name}", sub) for name, sub in sorted(state.subagents.items())]
    found: dict[str, dict[int, Row]] = {}
    for name, part in parts:
        setup = setup_for(part, reader.adapter.autocompact_at, profile, Thresholds())
        related = (
            []
            if part is state
            else [state, *(other for other in state.subagents.values() if other is not part)]
        )
        cache = Analyzer().analyze(part, setup, encoding_for(part), related=related).cache
        found[name] = {
            row.line: (row.read, row.write, row.logged_read, row.logged_write)
            for row in cache.requests
            if row.logged_read is not None and row.logged_write is not None
        }
    return [c.line for c in state.compactions], found


def within(simulated: int, logged: int) -> bool:
    return abs(simulated - logged) <= 0.05 * logged


def measure(path: Path) -> dict[str, dict[str, Any]]:
    compactions, rows = _analyze(path, subagents=True)
    lines = path.read_bytes().split(b"\n")
    companion = path.with_suffix("")  # <session>/subagents/...
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / path.name
        if companion.is_dir():
            (Path(folder) / companion.name).symlink_to(companion)
        for cut in compactions:
            copy.write_bytes(b"\n".join(lines[: cut - 1]) + b"\n")
            _, before = _analyze(copy, subagents=False)
            for line, row in before["main"].items():
                rows["main"].setdefault(line, row)
    tallies: dict[str, dict[str, Any]] = {}
    for name, by_line in rows.items():
        tally: dict[str, Any] = {"requests": 0, "both": 0, "read": 0, "write": 0, "misses": []}
        for line, (read, write, logged_read, logged_write) in sorted(by_line.items()):
            ok_read, ok_write = within(read, logged_read), within(write, logged_write)
            tally["requests"] += 1
            tally["read"] += ok_read
            tally["write"] += ok_write
            tally["both"] += ok_read and ok_write
            if not (ok_read and ok_write):
                tally["misses"].append((line, read, write, logged_read, logged_write))
        tallies[name] = tally
    return tallies


def run(paths: list[Path]) -> Results:
    from ctxtop.engine.errors import InputError

    results: Results = {}
    for path in main_files(paths):
        try:
            results[str(path)] = measure(path)
        except InputError as error:
            print(f"skipped: {error}", file=sys.stderr)
    return results


def _share(requests: int, both: int) -> str:
    share = f"{100 * both / requests:5.1f} %" if requests else "    -  "
    return f"{both:>5}/{requests:<5} {share}"


def _sums(parts: dict[str, dict[str, Any]]) -> tuple[int, int]:
    return (
        sum(part["requests"] for part in parts.values()),
        sum(part["both"] for part in parts.values()),
    )


def report(results: Results, before: Results | None, verbose: bool, misses: bool) -> None:
    print(f"{'session (main + sub-agents)':<46} {'before' if before else '':<21}now")
    grand = [0, 0, 0, 0]  # now: requests, both; before: requests, both
    for session, parts in results.items():
        requests, both = _sums(parts)
        old_requests, old_both = _sums(before.get(session, {})) if before else (0, 0)
        for index, value in enumerate((requests, both, old_requests, old_both)):
            grand[index] += value
        old = f"{_share(old_requests, old_both)}  " if before is not None else ""
        print(f"{Path(session).name[:46]:<46} {old}{_share(requests, both)}")
        if verbose:
            for name, part in parts.items():
                print(f"    {name:<42}{_share(part['requests'], part['both'])}")
        if misses:
            for name, part in parts.items():
                for line, read, write, logged_read, logged_write in part["misses"]:
                    print(
                        f"      miss {name} line {line}: simulated read {read} write {write},"
                        f" logged read {logged_read} write {logged_write}"
                    )
    old = f"{_share(grand[2], grand[3])}  " if before is not None else ""
    print(f"{'all':<46} {old}{_share(grand[0], grand[1])}")


def measured_by(checkout: Path, paths: list[Path]) -> Results:
    """This measure run with the ctxtop of ``checkout`` (in a process of its own)."""
    env = {**os.environ, "CTXTOP_ROOT": str(checkout.resolve()), "PYTHONPATH": str(checkout)}
    command = [sys.executable, str(Path(__file__).resolve()), "--json", *map(str, paths)]
    out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    results: Results = json.loads(out)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--verbose", action="store_true", help="a line per sub-agent too")
    parser.add_argument("--misses", action="store_true", help="every request off by over 5 %%")
    parser.add_argument("--json", action="store_true", help="the counts as JSON")
    parser.add_argument("--compare", type=Path, help="another ctxtop checkout: before")
    args = parser.parse_args()
    paths = [p.resolve() for p in args.paths]
    if args.compare is not None:
        now, before = measured_by(ROOT, paths), measured_by(args.compare, paths)
        report(now, before, args.verbose, args.misses)
    elif args.json:
        print(json.dumps(run(paths)))
    else:
        report(run(paths), None, args.verbose, args.misses)


if __name__ == "__main__":
    main()

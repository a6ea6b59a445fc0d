"""How close the prefix-cache simulation comes to the cache figures the logs report.

For each group of session files, the share of requests whose simulated cache read and write are
both within 5 % of the logged ones (and each figure alone), the main sessions and their sub-agents
(each sub-agent with what its parent and the other sub-agents logged on the shared cache), in two
modes:

- ``follow log`` (what ctxtop shows): each request is predicted from what the log says the
  previous one left cached (see engine/analysis/cache_sim.py);
- ``open loop``: the simulation never looks at the logged figures.

Groups: the bundled samples (sample_sessions/: Claude Code from the realagents model server and
from the real API, Codex), the realagents logs in tests/sessions/data/generated, and the public
real-API Claude Code sessions in tests/sessions/data/real. Token figures of realagents logs come
from its model server (it caches the whole prompt it was sent); the public ones are Anthropic's.

Usage: python bench/cache_agreement.py [--verbose] [SESSION_FILE ...]
Target (issue 5): at least 90 % of requests.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import ctxtop.engine.analysis.analyze as analyze_module  # noqa: E402
from ctxtop.engine.agents.session_reader import SessionReader, read_all  # noqa: E402
from ctxtop.engine.analysis.analyze import Analyzer  # noqa: E402
from ctxtop.engine.analysis.cache_sim import CacheSimulator  # noqa: E402
from ctxtop.engine.analysis.profiles import load_profile  # noqa: E402
from ctxtop.engine.analysis.setup import setup_for  # noqa: E402
from ctxtop.engine.config import Thresholds  # noqa: E402
from ctxtop.engine.sessions.ledger import encoding_for  # noqa: E402


def main_files(folder: Path, pattern: str = "*.jsonl") -> list[Path]:
    """Main session files below ``folder`` (sub-agent transcripts are read through them)."""
    return [
        p
        for p in sorted(folder.rglob(pattern))
        if not p.name.startswith("agent-") and "subagents" not in p.parts
    ]


def groups() -> dict[str, list[Path]]:
    data = ROOT / "tests/sessions/data"
    return {
        "samples": main_files(ROOT / "sample_sessions/claude-code")
        + main_files(ROOT / "sample_sessions/codex", "rollout-*.jsonl"),
        "realagents": main_files(data / "generated/claude-code")
        + main_files(data / "generated/codex", "rollout-*.jsonl"),
        "real API": main_files(data / "real/claude-code/public-d-kimuson-claude-code-viewer"),
    }


def tally(files: list[Path], verbose: bool) -> dict[str, list[int]]:
    totals: dict[str, list[int]] = {}
    for path in files:
        reader = SessionReader(path)
        read_all(reader)
        assert reader.adapter is not None
        state = reader.adapter.snapshot()
        profile = load_profile(reader.adapter.profile)
        for part in [state, *state.subagents.values()]:
            setup = setup_for(part, reader.adapter.autocompact_at, profile, Thresholds())
            # A sub-agent shares the prompt cache with its parent and the other sub-agents.
            related = (
                []
                if part is state
                else [state, *(other for other in state.subagents.values() if other is not part)]
            )
            cache = Analyzer().analyze(part, setup, encoding_for(part), related=related).cache
            rows = [row for row in cache.requests if row.within_5pct is not None]
            counts = [
                len(rows),
                sum(bool(row.within_5pct) for row in rows),
                sum(bool(row.read_within_5pct) for row in rows),
                sum(bool(row.write_within_5pct) for row in rows),
            ]
            kind = "main" if part is state else "sub-agent"
            if verbose:
                print(
                    f"    {path.name[:40]:<40} {kind:<9} {counts[0]:>3} requests, both"
                    f" {counts[1]}, read {counts[2]}, write {counts[3]}"
                )
            entry = totals.setdefault(f"{state.agent} {kind}", [0, 0, 0, 0])
            for index, value in enumerate(counts):
                entry[index] += value
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--verbose", action="store_true", help="a line per session file")
    args = parser.parse_args()
    chosen = {"given": args.files} if args.files else groups()
    for mode, follow in (("follow log", True), ("open loop", False)):
        analyze_module.CacheSimulator = functools.partial(  # type: ignore[misc]
            CacheSimulator, follow_log=follow
        )
        for group, files in chosen.items():
            print(f"{group} ({mode}):")
            for name, (requests, both, read, write) in sorted(tally(files, args.verbose).items()):
                if requests:
                    print(
                        f"  {name:<22} {requests:>4} requests: both within 5 %"
                        f" {100 * both / requests:5.1f} %, read {100 * read / requests:5.1f} %,"
                        f" write {100 * write / requests:5.1f} %"
                    )


if __name__ == "__main__":
    main()

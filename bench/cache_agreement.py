"""How close the prefix-cache simulation comes to the cache figures the logs report.

For each session file (default: the Claude Code and Codex logs written by the real CLIs against
the realagents model server, in tests/sessions/data/generated and sample_sessions/codex), the
share of requests whose simulated cache read and write are both within 5 % of the logged ones,
and each figure alone; the main session and its sub-agents each simulated on their own.

Usage: python bench/cache_agreement.py [SESSION_FILE ...]
Target (issue 5): at least 90 % of requests.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.analysis.analyze import Analyzer  # noqa: E402
from engine.analysis.profiles import load_profile, profile_for_agent  # noqa: E402
from engine.analysis.setup import setup_for  # noqa: E402
from engine.config import Thresholds  # noqa: E402
from engine.sessions.reader import SessionReader, read_all  # noqa: E402
from engine.sessions.report import encoding_for  # noqa: E402


def default_files() -> list[Path]:
    claude = ROOT / "tests/sessions/data/generated/claude-code"
    mains = [p for p in sorted(claude.rglob("*.jsonl")) if not p.name.startswith("agent-")]
    return [p for p in mains if "subagents" not in p.parts] + sorted(
        (ROOT / "sample_sessions/codex").rglob("rollout-*.jsonl")
    )


def main() -> None:
    files = [Path(arg) for arg in sys.argv[1:]] or default_files()
    totals: dict[str, list[int]] = {}
    for path in files:
        reader = SessionReader(path)
        read_all(reader)
        assert reader.adapter is not None
        state = reader.adapter.snapshot()
        profile = load_profile(profile_for_agent(state.agent))
        for part in [state, *state.subagents.values()]:
            setup = setup_for(part, reader.adapter.autocompact_at, profile, Thresholds())
            cache = Analyzer().analyze(part, setup, encoding_for(part)).cache
            rows = [row for row in cache.requests if row.within_5pct is not None]
            counts = [
                len(rows),
                sum(bool(row.within_5pct) for row in rows),
                sum(bool(row.read_within_5pct) for row in rows),
                sum(bool(row.write_within_5pct) for row in rows),
            ]
            kind = "main" if part is state else "sub-agent"
            print(
                f"{path.name[:40]:<40} {kind:<9} {counts[0]:>3} requests, both {counts[1]},"
                f" read {counts[2]}, write {counts[3]}"
            )
            entry = totals.setdefault(f"{state.agent} {kind}", [0, 0, 0, 0])
            for index, value in enumerate(counts):
                entry[index] += value
    for name, (requests, both, read, write) in sorted(totals.items()):
        if requests:
            print(
                f"{name:<24} {requests:>4} requests: both within 5 % {100 * both / requests:.1f} %,"
                f" read {100 * read / requests:.1f} %, write {100 * write / requests:.1f} %"
            )


if __name__ == "__main__":
    main()

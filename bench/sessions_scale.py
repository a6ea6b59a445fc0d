"""Sessions on disk at scale for bench/sessions_top.py: many realistic session files across the
agents, all written lately, in a temp home.

Each agent's sessions are prefixes (cut at a line end) of one long session made by that agent's
generator of bench/tail*.py (Claude Code's with its auto-compaction every window), sizes drawn
from a log-normal distribution (median 120 KB, a long tail up to ``MAX_BYTES``), each file's
working directory and tool outputs made its own (no count cache serves one file from another).
"""

from __future__ import annotations

import os
import random
import re
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tail
import tail_codex
import tail_copilot
import tail_gemini

MAX_BYTES = 12 << 20
MEDIAN_BYTES = 120 << 10
SIGMA = 1.3
# The share of each agent's sessions.
MIX = (("claude-code", 0.5), ("codex", 0.25), ("copilot-cli", 0.15), ("gemini-cli", 0.10))


def _claude() -> tail.Generator:
    return tail.Generator(compact_every=tail.WINDOW_BYTES)


MAKERS: dict[str, Callable[[], tail.Generator]] = {
    "claude-code": _claude,
    "codex": tail_codex.CodexGenerator,
    "copilot-cli": tail_copilot.generator,
    "gemini-cli": tail_gemini.generator,
}
# What opens a per-round output in each generator's lines (``[0000xxxx]``): its first four
# digits become the file's number.
ROUND = re.compile(rb'"\[0000(?=[0-9a-f]{4}\] )')
CWD = re.compile(rb'("cwd":")([^"]*)(")')


def master(agent: str, size: int) -> bytes:
    generator = MAKERS[agent]()
    lines, written = [], 0
    while written < size:
        line = generator.next_line()
        lines.append(line)
        written += len(line)
    return b"".join(lines)


def _path(home: Path, agent: str, index: int, when: float) -> Path:
    stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime(when))
    ident = str(uuid.UUID(int=index + 1))
    if agent == "claude-code":
        return home / ".claude/projects" / f"-home-dev-p{index % 400:03d}" / f"{ident}.jsonl"
    if agent == "codex":
        day = time.strftime("%Y/%m/%d", time.gmtime(when))
        return home / ".codex/sessions" / day / f"rollout-{stamp}-{ident}.jsonl"
    if agent == "gemini-cli":
        return home / f".gemini/tmp/p{index % 400:03d}/chats/session-{stamp}-{ident[-8:]}.jsonl"
    return home / ".copilot/session-state" / ident / "events.jsonl"


def lay_out(home: Path, count: int, seed: int = 31) -> tuple[list[Path], int]:
    """``count`` sessions written in the last ten minutes; their paths and total bytes."""
    rng = random.Random(seed)
    masters = {agent: master(agent, MAX_BYTES) for agent, _ in MIX}
    agents = rng.choices([a for a, _ in MIX], [w for _, w in MIX], k=count)
    now = time.time()
    paths, total = [], 0
    for index, agent in enumerate(agents):
        data = masters[agent]
        size = min(int(rng.lognormvariate(0, SIGMA) * MEDIAN_BYTES), MAX_BYTES)
        cut = data.find(b"\n", size)
        data = data[: len(data) if cut < 0 else cut + 1]
        mark = b'"[%04x' % (index % 0x10000)
        data = ROUND.sub(mark, data)
        data = CWD.sub(rb"\g<1>\g<2>-%d\g<3>" % (index % 400), data)
        when = now - rng.uniform(0, 600)
        path = _path(home, agent, index, when)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.utime(path, (when, when))
        paths.append(path)
        total += len(data)
    return paths, total

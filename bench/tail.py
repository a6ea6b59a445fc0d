"""Benchmark of the session reader on a synthetic Claude Code session.

Builds a ~100 MB (and a ~1 MB) Claude Code transcript by repeating the records of the bundled
Claude Code sample sessions (fresh uuids, message and tool call ids, tool results made unique per
round, one continuous parentUuid chain), then prints:

- the time to the first complete report (read, parse, adapter, ``build_report``);
- the peak RSS of the process after that;
- the processing time per appended line (``poll`` + a complete ``build_report``, as the dashboard
  does) while 1,000 lines are appended one by one to each file, interleaved so that both see the
  same background load, p50/p95, for the 1 MB and the 100 MB file;
- the time to re-open each file (token counts then come from the on-disk cache).

The tokenizer is loaded once before the figures (its load time is printed apart), and the
on-disk count cache starts empty in a temp dir.

Usage: python bench/tail.py [--size-mb 100] [--keep DIR]
Targets (issue 3): first report <= 1.5 s, peak RSS <= 300 MB, p95 <= 5 ms per appended line,
the two file sizes within 20 % of each other.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxtop.engine.agents.session_reader import SessionReader, read_all  # noqa: E402
from ctxtop.engine.sessions.report_json import build_report  # noqa: E402
from ctxtop.engine.tokens import get_encoding  # noqa: E402

SAMPLE = ROOT / "sample_sessions" / "claude-code"
APPENDS = 1000
# The summary Claude Code writes after a compaction (the bundled demo session's opening words).
COMPACT_SUMMARY = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation.\n\nSummary:\n"
    "1. Primary Request and Intent: keep working on the calculator."
)
# About a 200k-token window of log lines (~4 bytes a token): where Claude Code auto-compacts.
WINDOW_BYTES = 640 << 10


def template_records() -> list[dict[str, Any]]:
    """Conversation records of the bundled Claude Code samples (compactions left out)."""
    rows: list[dict[str, Any]] = []
    for path in sorted(SAMPLE.rglob("*.jsonl")):
        if "subagents" in path.parts:
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("isSidechain") or record.get("subtype") == "compact_boundary":
                continue
            rows.append(record)
    return rows


class Generator:
    """Endless Claude Code lines: the template repeated with fresh ids on one chain."""

    def __init__(self, compact_every: int | None = None) -> None:
        self.template = template_records()
        self.round = 0
        self.index = 0
        self.leaf: str | None = None
        self.uuid_map: dict[str, str] = {}
        # Auto-compaction as Claude Code does it: once the chain since the last compaction holds
        # about a window's worth of lines (``compact_every`` bytes), a boundary and a summary.
        self.compact_every = compact_every
        self.since_compaction = 0
        self.compactions = 0
        self.queued: list[bytes] = []

    def next_line(self) -> bytes:
        if self.queued:
            return self.queued.pop(0)
        if self.index == len(self.template):
            self.index = 0
            self.round += 1
            self.uuid_map = {}
            if self.compact_every and self.since_compaction >= self.compact_every:
                self.since_compaction = 0
                self.queued = self._compaction()
                return self.queued.pop(0)
        line = self._template_line()
        self.since_compaction += len(line)
        return line

    def _compaction(self) -> list[bytes]:
        """A compact_boundary (a new root) and the summary that starts the next chain, shaped
        like the boundary and summary of the bundled demo session (Claude Code 2.1)."""
        self.compactions += 1
        suffix = f"{self.compactions:012x}"
        boundary = f"c0c0c0c0-0000-4000-8000-{suffix}"
        summary = f"5c5c5c5c-0000-4000-8000-{suffix}"
        meta = {"trigger": "auto", "preTokens": 167_000, "durationMs": 1080}
        records = [
            {
                "parentUuid": None,
                "logicalParentUuid": self.leaf,
                "isSidechain": False,
                "type": "system",
                "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "isMeta": False,
                "uuid": boundary,
                "level": "info",
                "compactMetadata": meta,
            },
            {
                "parentUuid": boundary,
                "isSidechain": False,
                "type": "user",
                "message": {"role": "user", "content": f"{COMPACT_SUMMARY} (#{self.compactions})"},
                "isVisibleInTranscriptOnly": True,
                "isCompactSummary": True,
                "uuid": summary,
            },
        ]
        self.leaf = summary
        return [json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in records]

    def _template_line(self) -> bytes:
        record = dict(self.template[self.index])
        self.index += 1
        suffix = f"{self.round:08x}"
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            new = f"{uuid[:-8]}{suffix}"
            self.uuid_map[uuid] = new
            record["uuid"] = new
            if "parentUuid" in record:
                record["parentUuid"] = self.leaf
            self.leaf = new
        message = record.get("message")
        if isinstance(message, dict):
            message = record["message"] = dict(message)
            if isinstance(message.get("id"), str):
                message["id"] = f"{message['id']}_{suffix}"
            if isinstance(message.get("content"), list):
                message["content"] = [
                    self._fresh_ids(block, suffix) for block in message["content"]
                ]
        # Compact separators, as Claude Code writes them.
        return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"

    @staticmethod
    def _fresh_ids(block: Any, suffix: str) -> Any:
        """Tool call ids made unique per round, so every round's tool calls count, and result
        texts too, so no count cache can serve a repeated round."""
        if not isinstance(block, dict):
            return block
        if block.get("type") == "tool_use":
            return {**block, "id": f"{block['id']}_{suffix}"}
        if block.get("type") == "tool_result":
            content = block.get("content")
            if isinstance(content, str):
                content = f"[{suffix}] {content}"
            elif isinstance(content, list):
                content = [
                    {**part, "text": f"[{suffix}] {part['text']}"}
                    if isinstance(part, dict) and isinstance(part.get("text"), str)
                    else part
                    for part in content
                ]
            tool_use_id = f"{block['tool_use_id']}_{suffix}"
            return {**block, "tool_use_id": tool_use_id, "content": content}
        return block


def build(
    path: Path,
    size: int,
    make: Callable[[], Generator] = Generator,
    compact_every: int | None = None,
) -> Generator:
    generator = make()
    generator.compact_every = compact_every
    written = 0
    with path.open("wb") as handle:
        while written < size:
            line = generator.next_line()
            handle.write(line)
            written += len(line)
    return generator


def first_report(path: Path) -> tuple[float, float, SessionReader, dict[str, Any]]:
    """Seconds to the state (read, parse, adapter) and to the complete report after it."""
    started = time.perf_counter()
    reader = SessionReader(path)
    read_all(reader)
    assert reader.adapter is not None
    read = time.perf_counter() - started
    report = build_report(reader.adapter)
    return read, time.perf_counter() - started, reader, report


def append_interleaved(
    followers: list[tuple[Path, SessionReader, Generator]],
) -> list[list[float]]:
    """Append one line to each file in turn, timing ``poll`` + a complete ``build_report``.

    Interleaving puts both sizes under the same background load, so they can be compared.
    """
    times: list[list[float]] = [[] for _ in followers]
    handles = [path.open("ab", buffering=0) for path, _, _ in followers]
    for _, _, generator in followers:
        generator.index = len(generator.template)  # every size appends the same kind of lines
    try:
        for round_ in range(APPENDS):
            # Alternate which file goes first, so neither always follows the other's work.
            turns = list(zip(followers, handles, times, strict=True))
            for (_, reader, generator), handle, out in turns if round_ % 2 else turns[::-1]:
                handle.write(generator.next_line())
                started = time.perf_counter()
                reader.poll()
                assert reader.adapter is not None
                build_report(reader.adapter)
                out.append(time.perf_counter() - started)
    finally:
        for handle in handles:
            handle.close()
    return times


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def reopen(path: Path) -> float:
    """Seconds to a complete report of a file read before (token counts come from the cache)."""
    started = time.perf_counter()
    reader = SessionReader(path)
    read_all(reader)
    assert reader.adapter is not None
    build_report(reader.adapter)
    return time.perf_counter() - started


def main(make: Callable[[], Generator] = Generator, doc: str = __doc__) -> int:
    """``make``: the line generator of the agent format to measure (bench/tail_codex.py)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--size-mb", type=float, default=100.0)
    parser.add_argument("--keep", type=Path, help="build the files in this directory and keep them")
    args = parser.parse_args()
    started = time.perf_counter()
    get_encoding("o200k_base").count("warm up")
    loaded = time.perf_counter() - started
    print(f"tokenizer load (once per process, not in the figures below): {loaded:.2f} s")
    with tempfile.TemporaryDirectory() as scratch:
        # A cold on-disk count cache of our own: figures must not depend on earlier runs.
        os.environ["CTXTOP_CACHE_DIR"] = str(Path(scratch) / "cache")
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        followers: list[tuple[Path, SessionReader, Generator]] = []
        labels = []
        for label, size in (("1 MB", 1 << 20), (f"{args.size_mb:g} MB", int(args.size_mb * 2**20))):
            path = folder / f"bench-{label.replace(' ', '')}.jsonl"
            started = time.perf_counter()
            generator = build(path, size, make)
            built = time.perf_counter() - started
            size_mb = path.stat().st_size / 2**20
            read, seconds, reader, report = first_report(path)
            rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            followers.append((path, reader, generator))
            labels.append(label)
            print(
                f"{label:>7}: {size_mb:6.1f} MB, {report['api_requests']:,}"
                f" requests (built in {built:.1f} s)\n"
                f"         first complete report {seconds:.2f} s (state {read:.2f} s, then per-tool"
                f" token counts and the rest {seconds - read:.2f} s), peak RSS {rss_mb:.0f} MB"
            )
        p95s = []
        for label, latencies in zip(labels, append_interleaved(followers), strict=True):
            p50, p95 = percentile(latencies, 0.5), percentile(latencies, 0.95)
            p95s.append(p95)
            print(
                f"{label:>7}: per appended line ({APPENDS:,} appends, interleaved):"
                f" p50 {p50 * 1000:.2f} ms, p95 {p95 * 1000:.2f} ms"
            )
        print(f"p95 large/small: {p95s[1] / p95s[0]:.2f}")
        for label, (path, _, _) in zip(labels, followers, strict=True):
            print(f"{label:>7}: re-opened (token counts from the disk cache): {reopen(path):.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

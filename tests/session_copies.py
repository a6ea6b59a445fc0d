"""A long Claude Code session with compactions, made from a bundled sample: the sample's lines
repeated with fresh uuids and message/tool ids (each copy ends in the sample's own compaction and
the requests after it), as bench/tail.py builds its sessions."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "sample_sessions" / "claude-code" / "projects"
COMPACTED = [
    ROOT / "-home-dev-demo-project" / "b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl",
    ROOT / "-home-dev-a-projects-calc-legacy-2-0-77" / "b8dbf70f-8fe2-45d4-ad75-7bda748cad44.jsonl",
]
UUID = re.compile(rb"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-)[0-9a-f]{12}")
IDS = re.compile(rb"((?:msg|toolu|req)_[A-Za-z0-9]+)")


def copies(path: Path, count: int) -> list[bytes]:
    """The log's lines ``count`` times, each copy with its own uuids and message/tool ids."""
    lines = path.read_bytes().splitlines(keepends=True)
    out: list[bytes] = []
    for copy in range(count):
        suffix = f"{copy:012x}".encode()
        for line in lines:
            line = UUID.sub(rb"\g<1>" + suffix, line)
            out.append(IDS.sub(rb"\g<1>_c" + suffix, line))
    return out

"""A line generator for bench/tail.py that replays a real session's lines with fresh ids.

The head lines are written once; the template lines are then repeated round after round, every
id that counts (message ids, call ids, API call ids) and every tool output made unique per round,
so each round adds new responses and new tool results, as a growing live session does.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tail


class Replay(tail.Generator):
    def __init__(self, head: list[str], template: list[str], ids: Iterable[str], marker: str):
        """``marker``: the JSON text that opens a tool output (``"output":"``), to make outputs
        unique per round."""
        self.head = list(head)
        self.template = template
        self.ids = [[key for key in ids if key in line] for line in template]
        self.marker = marker
        self.round = 0
        self.index = 0

    def next_line(self) -> bytes:
        if self.head:
            return self.head.pop(0).encode() + b"\n"
        if self.index == len(self.template):
            self.index = 0
            self.round += 1
        line, ids = self.template[self.index], self.ids[self.index]
        self.index += 1
        suffix = f"{self.round:08x}"
        for key in ids:
            line = line.replace(key, f"{key}-{suffix}")
        line = line.replace(self.marker, f"{self.marker}[{suffix}] ")
        return line.encode() + b"\n"

"""``ctxtop --demo``: a bundled sample session appended to a file line by line, as if live.

The sample ships in the ``sample_sessions`` package (read with importlib.resources, so it works
from a non-editable install). After the last line the file is emptied and the replay starts over;
the reader sees a truncated file and starts over too.
"""

from __future__ import annotations

import threading
from importlib import resources
from pathlib import Path

# Claude Code 2.1: tool calls, a persisted 78 KB tool output, a sub-agent and a /compact.
DEMO_SESSION = (
    "claude-code",
    "projects",
    "-home-dev-demo-project",
    "b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl",
)
DEMO_INTERVAL = 0.3
DEMO_PAUSE = 3.0  # seconds the whole session stays on screen before the replay starts over


def opening(lines: list[bytes]) -> int:
    """How many lines the first step writes: up to the first request with usage figures, so
    the dashboard has something to show at once."""
    for index, line in enumerate(lines):
        if b'"usage"' in line:
            return index + 1
    return 1


def demo_lines() -> list[bytes]:
    data = resources.files("sample_sessions").joinpath(*DEMO_SESSION).read_bytes()
    return data.splitlines(keepends=True)


class DemoReplay:
    """Writes ``lines`` to ``target`` one per ``step()``; ``run`` steps every ``interval``."""

    def __init__(
        self,
        target: Path,
        lines: list[bytes] | None = None,
        *,
        first: int | None = None,
        interval: float = DEMO_INTERVAL,
        pause: float = DEMO_PAUSE,
    ) -> None:
        self.target = target
        self.lines = lines if lines is not None else demo_lines()
        # Lines written at once when a round starts.
        self.first = max(1, first if first is not None else opening(self.lines))
        self.interval = interval
        self.pause = pause
        self.position = 0
        self.rounds = 0
        self.target.write_bytes(b"")

    @property
    def finished(self) -> bool:
        return self.position >= len(self.lines)

    def step(self) -> None:
        """Append the next line; after the last, empty the file and start a new round."""
        if self.finished:
            self.target.write_bytes(b"")
            self.position = 0
            self.rounds += 1
        count = self.first if self.position == 0 else 1
        chunk = b"".join(self.lines[self.position : self.position + count])
        with self.target.open("ab") as out:
            out.write(chunk)
        self.position += count

    def run(self, stop: threading.Event) -> None:
        """Step until ``stop`` is set (a thread's target)."""
        while not stop.is_set():
            self.step()
            stop.wait(self.pause if self.finished else self.interval)

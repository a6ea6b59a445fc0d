"""``ctxtop --demo``: a bundled sample session appended to a file line by line, as if live.

The sample ships in the ``sample_sessions`` package (read with importlib.resources, so it works
from a non-editable install). After the last line the file is emptied and the replay starts over;
the reader sees a truncated file and starts over too. Each line is written with its record
times set to the moment it is written, so what depends on the clock (the prompt cache's warmth,
"agent wrote 2 s ago") reads as for a live session, not as for the day the sample was recorded.
"""

from __future__ import annotations

import re
import shutil
import threading
import time
from datetime import UTC, datetime
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath

# Claude Code 2.1: tool calls, a persisted 78 KB tool output, a sub-agent and a /compact.
DEMO_SESSION = PurePosixPath(
    "claude-code/projects/-home-dev-demo-project/b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl"
).parts
DEMO_INTERVAL = 0.3
DEMO_PAUSE = 3.0  # seconds the whole session stays on screen before the replay starts over
# Claude Code's record time ("timestamp":"2026-11-22T14:04:17.597Z"), the sample's only shape.
_RECORD_TIME = re.compile(rb'("timestamp":")\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z(")')


def restamped(chunk: bytes, now: float) -> bytes:
    """``chunk`` with every record time set to ``now`` (epoch seconds), in the same shape."""
    moment = datetime.fromtimestamp(now, UTC)
    stamp = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    return _RECORD_TIME.sub(lambda match: match[1] + stamp.encode() + match[2], chunk)


def opening(lines: list[bytes]) -> int:
    """How many lines the first step writes: up to the first request with usage figures, so
    the dashboard has something to show at once."""
    for index, line in enumerate(lines):
        if b'"usage"' in line:
            return index + 1
    return 1


def demo_lines() -> list[bytes]:
    data = resources.files("ctxtop.sample_sessions").joinpath(*DEMO_SESSION).read_bytes()
    return data.splitlines(keepends=True)


def _files(folder: Traversable, under: PurePosixPath) -> list[tuple[PurePosixPath, bytes]]:
    found: list[tuple[PurePosixPath, bytes]] = []
    for entry in sorted(folder.iterdir(), key=lambda item: item.name):
        if entry.is_dir():
            found.extend(_files(entry, under / entry.name))
        elif entry.is_file():
            found.append((under / entry.name, entry.read_bytes()))
    return found


def demo_companions(lines: list[bytes]) -> dict[int, list[tuple[PurePosixPath, bytes]]]:
    """The sample's companion files (a sub-agent's log, a persisted tool output) by the index of
    the first line that names them (the agent writes them before that line): each appears in
    the replay when the session would have it, so the dashboard shows the sub-agent then."""
    stem = DEMO_SESSION[-1].removesuffix(".jsonl")
    folder = resources.files("ctxtop.sample_sessions").joinpath(*DEMO_SESSION[:-1], stem)
    if not folder.is_dir():
        return {}
    by_line: dict[int, list[tuple[PurePosixPath, bytes]]] = {}
    for path, data in _files(folder, PurePosixPath()):
        name = path.name.split(".")[0].removeprefix("agent-").encode()
        first = next((i for i, line in enumerate(lines) if name in line), 0)
        by_line.setdefault(first, []).append((path, data))
    return by_line


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
        self.last_write: float | None = None  # time.time() of the last line written
        self.companions = demo_companions(self.lines) if lines is None else {}
        self.companion_dir = target.with_suffix("")
        self.target.write_bytes(b"")

    @property
    def finished(self) -> bool:
        return self.position >= len(self.lines)

    def step(self) -> None:
        """Append the next line; after the last, empty the file and start a new round."""
        if self.finished:
            self.target.write_bytes(b"")
            shutil.rmtree(self.companion_dir, ignore_errors=True)
            self.position = 0
            self.rounds += 1
        count = self.first if self.position == 0 else 1
        for index in range(self.position, self.position + count):
            self._write_companions(index)
        now = time.time()
        chunk = restamped(b"".join(self.lines[self.position : self.position + count]), now)
        with self.target.open("ab") as out:
            out.write(chunk)
        self.position += count
        self.last_write = now

    def _write_companions(self, index: int) -> None:
        for relative, data in self.companions.get(index, ()):
            path = self.companion_dir.joinpath(*relative.parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)

    def run(self, stop: threading.Event) -> None:
        """Step until ``stop`` is set (a thread's target)."""
        while not stop.is_set():
            self.step()
            stop.wait(self.pause if self.finished else self.interval)

"""Every message that crosses widgets or threads, in one place."""

from __future__ import annotations

from pathlib import Path

from textual.message import Message

from ctxtop.engine.live.view import LiveView


class SessionUpdated(Message):
    """The feed has a new sample. Bursts are coalesced: the handler takes the newest one."""

    def __init__(self, view: LiveView) -> None:
        super().__init__()
        self.view = view


class ViewApplied(Message):
    """The screen now shows ``view`` (posted after the widgets were updated)."""

    def __init__(self, view: LiveView, applied_at: float) -> None:
        super().__init__()
        self.view = view
        self.applied_at = applied_at  # time.perf_counter() when the widgets were updated


class LoadProgress(Message):
    """The first read of a big file: bytes read so far of the file's size."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__()
        self.done = done
        self.total = total


class FeedProblem(Message):
    """The file cannot be read or is not a session log of any supported agent (yet)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class NewerSession(Message):
    """A newer session started; the app switches to it unless the current one is pinned."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path


class FeedStale(Message):
    """What happened to the file since the figures on screen were read (gone, unreadable,
    truncated and waiting), or "" once new data has arrived: the figures are stale meanwhile."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class SkippedFiles(Message):
    """Newer files in the agents' folders that are not sessions of any known agent: passed over
    while following the newest session (said once per file)."""

    def __init__(self, paths: list[Path]) -> None:
        super().__init__()
        self.paths = paths


class CutPreviewed(Message):
    """A panel previewed an action on ``source``: the tool calls it would change, and how the
    prompt tree names that (``note``), so the tree shows the cut before anything is written."""

    def __init__(self, source: Path, note: str, call_ids: frozenset[str]) -> None:
        super().__init__()
        self.source = source
        self.note = note
        self.call_ids = call_ids


class LiveChanged(Message):
    """A live plan was put in force or stopped for ``session_id``: the header looks again."""

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id

"""The sessions table: every agent session active in the last N minutes, kept current by reading
only what changed.

``SessionsTable.start()`` lists each agent's sessions once (a glob and a ``stat`` per file) and
reads those written in the last ``active_minutes``; after that nothing is listed again: the
watcher (``engine/live/sessions_watch.py``) hands ``changed()`` the paths that changed, and
only those sessions are read again. A new session file becomes a row when it is first written;
a session not written for ``active_minutes`` leaves the table (and its memory is freed), a
deleted one shows as ended for ``ENDED_KEEP_SECONDS``.

A row is read in two steps, so ten thousand sessions cost seconds and little memory: first
quickly, from the newest bytes of the file (engine/live/sessions_quick.py: the context and fill,
nothing of the session kept; ``fill`` reads them newest first, in slices of time), then, for the
rows shown (``show``), in full: followed by byte offset, figures ``ctxtop report``'s
(``build_sample`` and ``analyze_session`` with a per-session ``Analyzer`` that keeps its work).
A row says which (``SessionRow.figures``).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ctxtop.engine.agents import AGENTS, store_changed, written
from ctxtop.engine.agents.base import SessionFiles
from ctxtop.engine.agents.discovery import Found, discover
from ctxtop.engine.agents.session_reader import SessionReader
from ctxtop.engine.analysis.analyze import Analyzer
from ctxtop.engine.analysis.report import analyze_session
from ctxtop.engine.config import Settings
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.live.session import LiveSession
from ctxtop.engine.live.sessions_quick import quick_row
from ctxtop.engine.live.sessions_row import SessionRow, at, session_figures, state_of
from ctxtop.engine.live.sessions_text import sort_rows
from ctxtop.engine.live.whole import with_whole_context
from ctxtop.engine.sessions.adapter import COMPANION_RESCAN
from ctxtop.engine.sessions.sample import build_sample

DEFAULT_ACTIVE_MINUTES = 30
# Without a viewer saying which rows it shows (``show``): the first rows in the default order.
SHOWN_ROWS = 50
# At most this many sessions followed in full (their state in memory); the rest, and those no
# longer shown past it, by quick reads of their newest bytes.
MAX_FULL = 200
# A session database's sessions written this long before it was last looked into are looked
# for again (the agent's clock and ours may differ a little).
STORE_SLACK_SECONDS = 5.0
# A deleted session stays on the table, marked ended, this long.
ENDED_KEEP_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class AgentRoot:
    """Where one agent keeps its sessions: the directory watched, one pattern below it, and the
    agent's rule for what matches but is not a session (the rule discovery follows too)."""

    agent: str
    directory: Path
    pattern: tuple[str, ...]
    files: SessionFiles

    def holds_session(self, path: Path) -> bool:
        try:
            parts = path.relative_to(self.directory).parts
        except ValueError:
            return False
        return _matches(parts, self.pattern) and self.files.is_session(path)


def _matches(parts: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    if not pattern:
        return not parts
    if pattern[0] == "**":
        return any(_matches(parts[start:], pattern[1:]) for start in range(len(parts) + 1))
    return (
        bool(parts)
        and fnmatch.fnmatchcase(parts[0], pattern[0])
        and _matches(parts[1:], pattern[1:])
    )


def agent_roots(
    env: Mapping[str, str], home: Path, agent: str | None = None
) -> tuple[AgentRoot, ...]:
    """Each agent's session directories (its home variable honoured) and the patterns below."""
    roots = []
    for name, plugin in AGENTS.items():
        files = plugin.sessions
        if agent not in (None, name) or files is None:
            continue
        for pattern in files.patterns:
            directory = files.home(env, home)
            parts = pattern.split("/")
            while parts and not any(char in parts[0] for char in "*?["):
                directory = directory / parts.pop(0)
            roots.append(AgentRoot(name, directory, tuple(parts), files))
    return tuple(roots)


def active_sessions(
    minutes: float,
    agent: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    now: float | None = None,
    listed: Iterable[Found] | None = None,
) -> list[Found]:
    """Sessions written in the last ``minutes``, newest first (``listed``: the sessions as
    ``discover`` just listed them, newest first)."""
    since = (time.time() if now is None else now) - minutes * 60
    listed = discover(agent, env, home) if listed is None else listed
    return [found for found in listed if found.mtime >= since]


class TrackedSession:
    """One session on the table, with its last row (None until it reads as one).

    A row is first read quickly (``quick_row``: the newest bytes of the file, nothing kept);
    a session whose row is shown is followed in full (``follow``: by byte offset, its figures
    ``ctxtop report``'s). ``live``, in full only: the session as the dashboard already reads
    it (its reader and token counts are shared, under its lock: the file is read once and held
    once), else one of its own."""

    def __init__(self, path: Path, settings: Settings, home: Path, written: float) -> None:
        self.path = path
        self.settings = settings
        self.home = home
        self.live: LiveSession | None = None
        self.analyzer: Analyzer | None = None
        self.row: SessionRow | None = None
        self.last_write = written
        self.gone_since: float | None = None
        self.generation = -1  # the live session's generation the row is of
        self.stale = True  # the quick row is to be read (again)
        # ``row`` as ``SessionsTable.rows`` last gave it: (row, (last write, state), given).
        self.made: tuple[SessionRow, tuple[float, str], SessionRow] | None = None

    @property
    def full(self) -> bool:
        return self.live is not None

    @property
    def reader(self) -> SessionReader:
        """The reader of the full reading (while followed in full)."""
        assert self.live is not None
        return self.live.reader

    def follow(self, live: LiveSession | None = None) -> bool:
        """Follow the session in full from now on (``live``: the dashboard's) and read it."""
        if self.live is None:
            self.live = live or LiveSession(self.path, self.settings.thresholds)
            # Keeps the cache simulation between updates; the dashboard's own stays its own
            # (it may analyse with another profile or a what-if window).
            self.analyzer = self.live.analyzer if live is None else Analyzer(ledger=live.ledger)
            self.generation = -1
        return self.update()

    def unfollow(self) -> None:
        """Back to quick reads (the row, its full figures, stays until the file changes)."""
        self.live = self.analyzer = None

    def update(self) -> bool:
        """Read what changed: in full, what was appended (all of it) and the figures if
        anything was (here or by the dashboard sharing the session); else the newest bytes."""
        if self.live is None:
            self.stale = False
            row = quick_row(self.path, self.home)
            changed = row != self.row
            self.row = row if row is not None else self.row
            return changed
        with self.live.lock:
            return self._update(self.live)

    def _update(self, live: LiveSession) -> bool:
        live.poll()
        written = live.reader.last_written()  # the dashboard header's clock too
        if written is not None and written > self.last_write:
            self.last_write = written
        adapter = live.reader.adapter
        if live.generation == self.generation or adapter is None:
            return False
        self.generation = live.generation
        self.stale = False
        profile = self.settings.profile
        sample = build_sample(adapter, live.ledger, breakdown=True)
        try:
            analysis = analyze_session(
                adapter,
                profile=None if profile == "default" else profile,
                triggers=self.settings.thresholds,
                analyzer=self.analyzer,
            )
        except CtxtopError:
            analysis = None  # e.g. a profile file that does not parse: figures without it
        sample = with_whole_context(sample, analysis)
        row = session_figures(sample, analysis, adapter.snapshot(), self.home)
        self.row = dataclasses.replace(row, compacting=adapter.compacting())
        return True


class SessionsTable:
    """The sessions active in the last ``active_minutes``, as rows (``rows()``)."""

    def __init__(
        self,
        *,
        active_minutes: float = DEFAULT_ACTIVE_MINUTES,
        agent: str | None = None,
        settings: Settings | None = None,
        env: Mapping[str, str] | None = None,
        home: Path | None = None,
        clock: Callable[[], float] = time.time,
        shared: Callable[[Path], LiveSession | None] | None = None,
    ) -> None:
        """``shared``: the session a path is already read as (the dashboard's), or None."""
        self.active_seconds = active_minutes * 60
        self.shared = shared
        self.agent = agent
        self.settings = settings or Settings()
        self.env = os.environ if env is None else env
        self.home = Path.home() if home is None else home
        self.clock = clock
        self.roots = agent_roots(self.env, self.home, agent)
        self.tracked: dict[Path, TrackedSession] = {}
        self.shown: tuple[str, ...] | None = None  # see ``show``
        self.recheck: dict[Path, float] = {}  # session → when to read it again (monotonic)
        self.store_seen: dict[Path, float] = {}  # session database → when last looked into

    def watched(self) -> tuple[Path, ...]:
        """The agents' session directories that exist now (watched recursively)."""
        found = (root.directory for root in self.roots if root.directory.is_dir())
        return tuple(dict.fromkeys(found))

    def start(self, budget: float | None = None) -> None:
        """List the sessions once and read those active now (``budget``: for at most that many
        seconds, the rest later, by ``fill``)."""
        now = self.clock()
        for found in discover(self.agent, self.env, self.home):
            if now - found.mtime <= self.active_seconds:
                self._track(found.path, found.mtime, read=False)
        self.fill(budget)

    def _track(self, path: Path, written: float, *, read: bool = True) -> TrackedSession:
        session = self.tracked.get(path)
        if session is None:
            session = TrackedSession(path, self.settings, self.home, written)
            self.tracked[path] = session
            live = self.shared(path) if self.shared is not None else None
            if live is not None:  # read anyway (the dashboard's): in full at once
                session.follow(live)
                return session
        if read:
            self._read(session)
        return session

    def _read(self, session: TrackedSession) -> bool:
        """A session's first reading: in full when the table is small enough for every row to
        be shown (``SHOWN_ROWS``), else quickly."""
        return session.follow() if len(self.tracked) <= SHOWN_ROWS else session.update()

    def show(self, keys: Iterable[str] | None) -> None:
        """The rows shown now (the viewer's: those on screen, the one opened): their full
        figures are read, by ``fill``. None: the first ``SHOWN_ROWS`` in the default order."""
        self.shown = None if keys is None else tuple(keys)

    def _wanted(self) -> list[TrackedSession]:
        """The sessions whose rows are shown, in the viewer's order."""
        keys = self.shown
        if keys is None:
            rows = [s.row for s in self.tracked.values() if s.row is not None]
            keys = tuple(row.key for row in sort_rows(rows)[:SHOWN_ROWS])
        wanted = (self.tracked.get(Path(key.split("#", 1)[0])) for key in keys)
        return [session for session in wanted if session is not None]

    def pending(self) -> bool:
        """Whether ``fill`` has work: rows not read yet, shown rows without full figures."""
        return any(s.stale for s in self.tracked.values()) or any(
            not s.full for s in self._wanted()
        )

    def fill(self, budget: float | None = None) -> bool:
        """Read the rows not read yet (quickly, the newest sessions first), then the shown
        rows in full, for at most ``budget`` seconds (None: all); True when a row changed."""
        ends = None if budget is None else time.monotonic() + budget
        changed = False
        stale = [s for s in self.tracked.values() if s.stale and not s.full]
        stale.sort(key=lambda s: s.last_write, reverse=True)
        for session in stale:
            if ends is not None and time.monotonic() >= ends:
                return changed
            changed = self._read(session) or changed
        wanted = self._wanted()
        for session in wanted:
            if ends is not None and time.monotonic() >= ends:
                return changed
            if not session.full:
                changed = session.follow() or changed
        self._forget_full(wanted)
        return changed

    def _forget_full(self, wanted: list[TrackedSession]) -> None:
        """Past ``MAX_FULL`` sessions followed in full, those no longer shown go back to quick
        reads (their memory freed)."""
        full = [s for s in self.tracked.values() if s.full]
        if len(full) <= MAX_FULL:
            return
        keep = {id(s) for s in wanted}
        for session in full[: len(full) - MAX_FULL]:
            if id(session) not in keep:
                session.unfollow()

    def session_of(self, path: Path) -> LiveSession | None:
        """The session ``path`` is read as here in full (for the dashboard to show without
        reading it again), or None when it is not on the table so."""
        tracked = self.tracked.get(path)
        return tracked.live if tracked is not None else None

    def changed(self, paths: Iterable[Path]) -> None:
        """Notified changes: read the sessions they belong to; a new session file is tracked."""
        polled: set[Path] = set()
        for path in paths:
            if self._store_changed(path, polled):
                continue
            written = _mtime(path)
            session = self.tracked.get(path)
            if session is None and written is not None and self._is_session(path):
                self._track(path, written)
                polled.add(path)
                continue
            owners = [session] if session is not None else self._owners(path)
            for owner in owners:
                if written is not None:
                    owner.last_write = max(owner.last_write, written)
                if owner.path not in polled:
                    polled.add(owner.path)
                    owner.update()
                if session is None and owner.full:
                    # A new companion file (a sub-agent's) is found by the adapter's next
                    # listing, at most COMPANION_RESCAN seconds after this read: read again then.
                    again = time.monotonic() + COMPANION_RESCAN + 0.05
                    self.recheck.setdefault(owner.path, again)
        # A changed session whose row is shown and was only read quickly: in full now.
        for session in self._wanted():
            if session.path in polled and not session.full:
                session.follow()
        self._note_gone()

    def _store_changed(self, path: Path, polled: set[Path]) -> bool:
        """A change of an agent's session database: its new sessions are tracked, those it holds
        read again (each reads only its own new rows). False: ``path`` is no such database."""
        now = self.clock()
        since = self.store_seen.get(path, now - self.active_seconds)
        found = store_changed(path, since - STORE_SLACK_SECONDS)
        if found is None:
            return False
        self.store_seen[path] = now
        database, sessions = found
        for session, when in sessions:
            if session not in self.tracked:
                self._track(session, when)
                polled.add(session)
            else:
                tracked = self.tracked[session]
                tracked.last_write = max(tracked.last_write, when)
        for tracked in list(self.tracked.values()):
            if tracked.path.parent == database and tracked.path not in polled:
                polled.add(tracked.path)
                tracked.update()
        return True

    def _is_session(self, path: Path) -> bool:
        """As ``discover`` lists them: a file created with nothing written yet is not one yet
        (its first line may say it is a sub-agent's)."""
        try:
            empty = written(path)[1] == 0
        except OSError:
            return False
        return not empty and any(root.holds_session(path) for root in self.roots)

    def _owners(self, path: Path) -> list[TrackedSession]:
        """Tracked sessions a changed companion file may belong to (a sub-agent's file, a
        persisted tool output): those whose directory holds it. Polling one costs a ``stat``
        when nothing of it changed."""
        parents = set(path.parents)
        return [s for s in self.tracked.values() if s.path.parent in parents]

    def poll_all(self) -> None:
        """Without change notifications: read every tracked session's new bytes, if any."""
        for session in self.tracked.values():
            written = _mtime(session.path)
            if written is not None and written > session.last_write:
                session.last_write = written
                session.update()
        self._note_gone()

    def rescan(self) -> None:
        """Without change notifications: list the sessions again to find new ones."""
        now = self.clock()
        for found in discover(self.agent, self.env, self.home):
            if found.path not in self.tracked and now - found.mtime <= self.active_seconds:
                self._track(found.path, found.mtime, read=False)

    def _note_gone(self) -> None:
        now = self.clock()
        for session in self.tracked.values():
            exists = _mtime(session.path) is not None
            if not exists and session.gone_since is None:
                session.gone_since = now
            elif exists:
                session.gone_since = None

    def tick(self) -> None:
        """Read sessions whose companions changed once more (see ``changed``); forget sessions
        that went quiet (or were deleted a while ago)."""
        due = [path for path, at in self.recheck.items() if at <= time.monotonic()]
        for path in due:
            del self.recheck[path]
            if path in self.tracked:
                self.tracked[path].update()
        now = self.clock()
        for path, session in list(self.tracked.items()):
            quiet = now - session.last_write > self.active_seconds
            ended = session.gone_since is not None and now - session.gone_since > ENDED_KEEP_SECONDS
            if quiet or ended:
                del self.tracked[path]

    def rows(self) -> tuple[SessionRow, ...]:
        """One row per session read so far (sub-agents under their parent), with the state now."""
        now = self.clock()
        rows = []
        for session in self.tracked.values():
            row = session.row
            if row is None:
                continue
            gone = session.gone_since is not None
            state = state_of(row, now, gone, session.last_write)
            made = session.made
            # The row as last made while nothing it shows changed (ten thousand rows are
            # looked at every second); a sub-agent's state moves on with the clock.
            if made is None or made[0] is not row or made[1] != (session.last_write, state):
                made = None
            if made is None or row.children:
                shown = at(dataclasses.replace(row, last_write=session.last_write), now, gone)
                made = session.made = (row, (session.last_write, state), shown)
            rows.append(made[2])
        return tuple(rows)


def _mtime(path: Path) -> float | None:
    try:
        return written(path)[0]
    except OSError:
        return None

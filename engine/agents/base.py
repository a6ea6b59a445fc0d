"""What an agent plugin is: everything ctxtop knows of one agent, declared in the agent's own
folder (``engine/agents/<agent>/plugin.py``, one ``Agent``) and registered by one line in
``engine/agents/__init__.py``. Nothing outside ``engine/agents/`` names an agent
(tests/agents/test_agent_folders.py): the rest of ctxtop asks the registry.

An ``Agent`` declares:

- ``reader``: the ``Adapter`` of its session logs (engine/sessions/adapter.py): detection,
  parsing into the session model, its auto-compact point and the name of its layout profile;
- ``sessions``: where its sessions live (``SessionFiles``: home variable, default home, globs, and
  the files that match but are not sessions of their own, e.g. sub-agents'), used alike by
  discovery (``ctxtop sessions``, following the newest) and the live sessions table;
- ``auto_compact``: its own compaction strategy as ``ctxtop compact`` compares it (``rules.py``);
- ``writer_class`` / ``source_class``: the fork writer of ``ctxtop edit`` and the compaction
  source of ``ctxtop compact``, as ``"module:Class"`` (None: ctxtop cannot write its format);
  ``fork_name``: the file names its writer gives forks, for ``ctxtop undo``; ``compacts_unread``:
  a log of it ctxtop cannot read as a session yet can compact from its items;
  ``summary_openings``: how its own compaction summaries begin;
- ``proxy``: how ``ctxtop proxy`` tells its requests apart and how to start it through the proxy
  (``ProxyUse``: session headers, the opening rule, the standing context it injects, setup text).

The capability flags say up front what ctxtop can do with a session, before any work is done."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxtop.engine.sessions.adapter import Adapter

if TYPE_CHECKING:
    from ctxtop.engine.compaction.source import Source
    from ctxtop.engine.editing.writer import Writer


@dataclass(frozen=True, slots=True)
class AutoCompact:
    """Where the agent compacts on its own in a window, and what it then does."""

    at_tokens: int | None  # None: never (auto-compact turned off)
    action: str
    does: str  # the action in a word or two, for a table
    extra: Mapping[str, Any] = field(default_factory=dict)  # more columns of the strategy


@dataclass(frozen=True, slots=True)
class AutoCompactRule:
    """The agent's own compaction strategy: ``at(window, model, env, home)``."""

    label: str  # in the strategies' table
    at: Callable[[int, str | None, Mapping[str, str], Path], AutoCompact]


@dataclass(frozen=True, slots=True)
class SessionFiles:
    """Where an agent keeps its sessions: below its home (``variable`` when set, else
    ``default``; ``~`` is the user's home), the files matching one of ``patterns`` (globs, one
    part per directory level; the first is the one shown), except those ``not_session`` names
    (sub-agents' files read with their parent, ...). One rule for discovery and the live table.
    ``listed``: the same rule over a whole listing, for a rule that remembers only what is
    listed; ``find``: for sessions that are not files (rows of a database), how to list them
    (the patterns then only say where they are)."""

    variable: str | None
    default: str
    patterns: tuple[str, ...]
    not_session: Callable[[Path], bool] | None = None
    listed: Callable[[Iterable[Path]], Iterator[Path]] | None = None
    find: Callable[[Mapping[str, str], Path], Iterator[Path]] | None = None

    def home(self, env: Mapping[str, str], home: Path) -> Path:
        base = env.get(self.variable) if self.variable else None
        return Path(base) if base else home / self.default.removeprefix("~").lstrip("/")

    def where(self, env: Mapping[str, str]) -> str:
        """The place as the user would write it, the home variable resolved when it is set."""
        home = (env.get(self.variable) if self.variable else None) or self.default
        return f"{home}/{self.patterns[0]}"

    def is_session(self, path: Path) -> bool:
        """Whether a file matching a pattern is a session of its own."""
        return self.not_session is None or not self.not_session(path)

    def files(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        if self.find is not None:
            yield from self.find(env, home)
            return
        root = self.home(env, home)
        matching = (path for pattern in self.patterns for path in root.glob(pattern))
        if self.listed is not None:
            yield from self.listed(matching)
        else:
            yield from (path for path in matching if self.is_session(path))


@dataclass(frozen=True, slots=True)
class ProxyUse:
    """How the agent's requests go through ``ctxtop proxy``."""

    name: str  # as the setup lines call it
    start: str  # the command starting it through the proxy at ``{url}``
    # Headers naming its session id in a request, most specific first.
    session_headers: tuple[str, ...] = ()
    # Its session id where it puts it in a request's decoded body (None: not found there).
    session_in_body: Callable[[Any], str | None] | None = None
    # It sends no session id: its requests are tied to the session by the conversation's
    # opening (engine/proxy/opening.py).
    by_opening: bool = False
    # How the user messages it injects (instructions, not the user's words) begin: a live
    # compaction keeps them as standing context.
    standing: tuple[str, ...] = ()

    def setup_line(self, url: str) -> str:
        return self.start.replace("{url}", url)


def _load(where: str | None) -> Any:
    """The object ``module:Name`` names (None for None), imported on first use."""
    if where is None:
        return None
    module, _, name = where.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True, slots=True)
class Agent:
    """An agent plugin (see the module's docstring). Its writer and compaction source are named
    (``module:Class``) and imported when first asked for: reading a session (``ctxtop report``,
    the dashboard) does not load the editing and compaction engines."""

    reader: type[Adapter]
    writer_class: str | None = None
    source_class: str | None = None
    auto_compact: AutoCompactRule | None = None
    sessions: SessionFiles | None = None  # None: no default place (opened by name)
    # The names its writer gives forks, as a regular expression where ``{id}`` stands for the
    # fork's session id (``ctxtop undo`` removes only files so named).
    fork_name: str | None = None
    # ``module:function`` (bytes -> bool): a log of this agent ctxtop cannot read as a session
    # but can compact from its items.
    compacts_unread: str | None = None
    # How the summaries of its own compactions begin (a later summary leaves that note out).
    summary_openings: tuple[str, ...] = ()
    proxy: ProxyUse | None = None
    # What ``ctxtop undo`` tells after removing a fork's files, ``{id}`` standing for the fork's
    # session id: for an agent that keeps its own copy of a fork the user imported.
    undo_note: str | None = None

    @property
    def writer(self) -> type[Writer] | None:
        found: type[Writer] | None = _load(self.writer_class)
        return found

    @property
    def source(self) -> type[Source] | None:
        found: type[Source] | None = _load(self.source_class)
        return found

    @property
    def name(self) -> str:
        return self.reader.agent

    @property
    def profile(self) -> str:
        """The layout profile (engine/analysis/profiles/NAME.yaml) of the agent's prompts."""
        return self.reader.profile

    @property
    def can_edit(self) -> bool:
        return self.writer_class is not None

    @property
    def can_compact(self) -> bool:
        return self.source_class is not None

    @property
    def can_restore(self) -> bool:
        """``ctxtop restore`` can fork its sessions at a compaction (its writer says so)."""
        return self.writer is not None and self.writer.supports_restore

    @property
    def can_resume(self) -> bool:
        """A fork of it can be resumed by the agent (its writer knows the command)."""
        return self.writer is not None and self.writer.resumable

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """Session files in the agent's default place (its home variable honoured)."""
        return iter(()) if self.sessions is None else self.sessions.files(env, home)

    def names_fork(self, name: str, session_id: str) -> bool:
        """Whether ``name`` is one its writer gives a fork with that session id."""
        pattern = self.fork_name
        return pattern is not None and bool(
            re.fullmatch(pattern.replace("{id}", re.escape(session_id)), name)
        )

    def compacts_unread_log(self, data: bytes) -> bool:
        test: Callable[[bytes], bool] | None = _load(self.compacts_unread)
        return test is not None and test(data)

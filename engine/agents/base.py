"""What an agent plugin is: the reader of its session logs (which also names the agent's layout
profile, finds its sessions and knows its auto-compact point), and, where ctxtop can write that
format, the fork writer of ``ctxtop edit`` and the compaction source of ``ctxtop compact``, and
the agent's own auto-compact strategy as ``ctxtop compact`` compares it. The capability flags say
up front what ctxtop can do with a session, before any work is done."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.sessions.adapter import Adapter

if TYPE_CHECKING:
    from engine.compaction.source import Source
    from engine.editing.writer import Writer


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


def _load(where: str | None) -> Any:
    """The class ``module:Name`` names (None for None), imported on first use."""
    if where is None:
        return None
    module, _, name = where.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True, slots=True)
class Agent:
    """An agent plugin. Its writer and compaction source are named (``module:Class``) and imported
    when first asked for: reading a session (``ctxtop report``, the dashboard) does not load the
    editing and compaction engines."""

    reader: type[Adapter]
    writer_class: str | None = None
    source_class: str | None = None
    auto_compact: AutoCompactRule | None = None

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
        """Session files in the agent's default location (see ``Adapter.discover``)."""
        return self.reader.discover(env, home)

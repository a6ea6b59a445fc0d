"""What an agent plugin is: the reader of its session logs, and (where ctxtop can write that
format) the fork writer of ``ctxtop edit`` and the compaction source of ``ctxtop compact``. The
capability flags say up front what ctxtop can do with a session, before any work is done."""

from __future__ import annotations

from dataclasses import dataclass

from engine.compaction.source import Source
from engine.editing.writer import Writer
from engine.sessions.adapter import Adapter


@dataclass(frozen=True, slots=True)
class Agent:
    reader: type[Adapter]
    writer: type[Writer] | None = None
    source: type[Source] | None = None

    @property
    def name(self) -> str:
        return self.reader.agent

    @property
    def can_edit(self) -> bool:
        return self.writer is not None

    @property
    def can_compact(self) -> bool:
        return self.source is not None

    @property
    def can_resume(self) -> bool:
        """A fork of it can be resumed by the agent (its writer knows the command)."""
        return self.writer is not None

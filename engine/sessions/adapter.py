"""The contract between the session reader and one agent's log format.

An adapter turns parsed records of one agent's log into a ``SessionState``
(engine/sessions/model.py). The reader (engine/agents/session_reader.py) owns the file: it reads
bytes from the last offset, splits complete lines, decodes JSON, counts and reports bad lines, and
handles truncation/replacement. The adapter never opens the main file and never sees bytes, only
JSON values.

How it flows:

1. **Detection** (from content, never from the file name alone). The reader parses the first
   records of the file (up to ``DETECT_RECORDS`` JSON lines; for a file that is one JSON document,
   the elements of a top-level array, or the document itself) and calls ``detect(head)`` on every
   class in ``engine.agents.ADAPTERS``. Each returns a score: 0 = not mine, 1 = could be
   (a generic format), 10 = typical fields, 100 = unmistakable (e.g. Codex ``session_meta``). The
   highest score wins; ties go to the earlier entry in ``ADAPTERS``. ``detect`` must be cheap and
   must not raise.

2. **Feeding**. ``adapter = Cls(path)`` then, for every complete line in file order,
   ``adapter.feed(record, line)`` with the decoded JSON value and its 1-based line number. Update
   ``self.state`` in place, cost proportional to the record (no rescans of earlier records: keep
   whatever index you need, e.g. dicts by id). Records you don't understand are ignored silently
   (agents add record types all the time); a record of a *known* type whose shape is wrong is
   reported with ``self.state.skip(line, reason)``. Never raise from ``feed`` for bad input.
   Use the helpers on ``SessionState``: ``record_response`` (usage counted once per key, latest
   value wins, totals kept exact), ``record_tool_call`` / ``record_tool_result`` (once per call id),
   ``record_compaction``, ``subagent(id)`` (a child state with its own window), ``touch(ts)``.
   Keep ``state.context`` = the messages the model sees next, in order (see SessionState).

   A file that is a single JSON document (not JSONL) can't be tailed: when it changes, the reader
   builds a fresh adapter and feeds every element again (``line`` = element index + 1).
   When the file shrinks or is replaced, the reader also starts over with a fresh adapter.

3. **Companion files**. Some agents write a session across several files (Claude Code sub-agent
   transcripts). ``companions()`` returns the extra files to follow now; the reader tails each one
   the same way and calls ``feed_companion(path, record, line)``. It is called after every batch,
   so new files are picked up live. Default: none.

4. **Snapshot**. ``snapshot()`` returns the state. It is the live object, not a copy: read it
   between feeds (the reader and the TUI drive both from one thread), don't mutate it.

5. **A session in a database** (OpenCode's ``opencode.db``): ``tailer(path, clock)`` returns,
   for a path that names such a session (``<database>#<session id>``), a ``LineTailer`` that
   reads its new and changed rows as JSON lines; the reader then feeds those as it feeds a
   file's lines. ``written(path)`` tells when such a session was last written (and how big its
   store is), for the sessions table and discovery; ``store_changed`` which sessions a change
   of the database touched. Default: a session is a file.

6. **Agent facts**. ``autocompact_at(context_window)`` gives the token count at which the agent
   compacts by its documented rule (None if unknown). ``profile`` names the layout profile of
   the agent's prompts (``engine/analysis/profiles/<profile>.yaml``). Where its session files
   live is the plugin's (``SessionFiles`` in engine/agents/base.py).

Normalisation rules (the report relies on them):

- ``Usage.input_tokens`` is uncached input; ``cache_read_tokens``/``cache_write_tokens`` are apart;
  ``input_tokens_total`` is their sum = the whole prompt. ``output_tokens`` includes reasoning.
- A response without usage (e.g. Claude's ``<synthetic>``), or whose usage holds no token
  figure (``"usage": {}``: see ``logs_tokens``), is not a response: don't record it.
- Sub-agents' responses go into ``state.subagent(id)``, never into the parent's totals, and a
  response a sub-agent transcript replays from the parent (same key) must not be recorded again.
- ``state.context_window`` only when the agent logged one (Codex ``model_context_window``);
  otherwise the agent's own rule (``cli_window``), else the model registry.
- After a compaction, ``record_compaction`` (with ``post_tokens`` when the log has it) and put
  the replacement history in ``state.context``: until the next response the report shows the
  compaction's figure, or else a tokenizer estimate of the new context.
- Context figures: the report takes ``last_response`` (prompt + output) and estimates the
  messages after that response's own message in ``state.context`` (so set ``response_key`` on
  the assistant message a response produced).

Speed (a 100 MB log must open in seconds and a live append cost well under a millisecond):

- keep JSON you may never need as ``Block.raw`` / ``ToolCall.raw_input`` instead of serialising
  it while feeding (``Block.content()`` / ``ToolCall.input()`` do it on demand);
- ``ignores(raw)`` may skip bulky record types by a byte prefix, before they are decoded;
- ``Block.tokens`` caches the report's tokenizer estimate: leave it None.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from ctxtop.engine.sessions.model import SessionState
from ctxtop.engine.sessions.tail import ByteSource, LineTailer

DETECT_RECORDS = 20
# How often (seconds) an adapter lists its companions' directories again while following a live
# session (new companion files are rare; listing on every poll would be wasted work).
COMPANION_RESCAN = 1.0
# The largest context window of any model is 10M tokens: one request's figure above that is not
# a real one (and later steps size things by it). Running totals over a session may be larger.
MAX_TOKENS = 10**7
MAX_TOTAL_TOKENS = 10**12


def token_count(value: Any, limit: int = MAX_TOKENS) -> int | None:
    """A token figure from a log: a whole, finite number from 0 to ``limit``, else None
    (a log may hold anything: a string, a bool, -1, 1e308, NaN)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if 0 <= value <= limit else None  # NaN fails both comparisons


def logs_tokens(raw: Any, names: Sequence[str]) -> bool:
    """Whether the usage object ``raw`` holds a figure under one of the token count ``names``:
    one that holds none (``"usage": {}``) was no API request, and must not become the last."""
    if type(raw) is not dict and not isinstance(raw, Mapping):  # (dict: no ABC check)
        return False
    # (the figures looked up in one pass, no generator: once per response line of a long log)
    return list(map(raw.get, names)).count(None) < len(names)


# Detection scores.
NOT_MINE = 0
GENERIC = 1
LIKELY = 10
CERTAIN = 100


class Adapter(ABC):
    """One agent's log format. Subclasses set ``agent`` and implement ``detect`` and ``feed``."""

    agent: ClassVar[str]  # the agent's id, its key in ``engine.agents.AGENTS``
    label: ClassVar[str] = ""  # human name, e.g. "Claude Code"
    # The layout profile of the agent's prompts (engine/analysis/profiles/NAME.yaml); an agent
    # without one of its own is read as a VS Code Copilot Chat prompt.
    profile: ClassVar[str] = "copilot"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.state = SessionState(agent=self.agent, path=path)
        self._companion_scan = -COMPANION_RESCAN  # monotonic time of the last listing

    def _companion_scan_due(self) -> bool:
        """True, and the time noted, when the last companion listing is ``COMPANION_RESCAN``
        seconds old (for ``companions`` to list directories again)."""
        now = time.monotonic()
        if now - self._companion_scan < COMPANION_RESCAN:
            return False
        self._companion_scan = now
        return True

    @classmethod
    @abstractmethod
    def detect(cls, head: Sequence[Any]) -> int:
        """Score how surely ``head`` (the first decoded records of a file) is this format."""

    # The agent's typed record stream (engine/sessions/entries.py), when it has one: the one
    # function that makes a decoded line its entry, for this reader, the fork writer and the
    # compaction source alike. None: the reader takes decoded values as they are.
    entry: ClassVar[staticmethod[[Any, int], Any] | None] = None

    @abstractmethod
    def feed(self, record: Any, line: int) -> None:
        """Apply one decoded record (1-based ``line``) of the main file to ``self.state``."""

    def feed_entry(self, entry: Any, line: int) -> None:
        """Apply one line's typed entry (``entry``), made already by the caller: the session's
        lines were made entries once for the reader and the fork writer alike."""
        self.feed(entry, line)

    def ignores(self, raw: bytes) -> bool:
        """True for a raw line this adapter would ignore anyway, so it need not be decoded.

        A cheap byte test (e.g. a known prefix of a bulky record type the adapter never reads);
        such lines are counted as read but not checked for valid JSON. Default: decode all.
        """
        return False

    # -- a cold read's history ---------------------------------------------------------------

    # Set by an adapter whose quick reading of the history turned out not to give the figures a
    # full reading gives (a rare shape of log): the reader then reads the file again from its
    # start with a fresh adapter, without ``plan_history``.
    needs_full_read = False

    def plan_history(self, open_source: Callable[[], ByteSource]) -> None:
        """Called once before a file is read from its start: an adapter may decide, from the
        file's bytes (``open_source()``: as they are then, to look back from the end; a context
        manager), which of the first lines are history the context no longer holds (before an
        agent's last compaction), which it then takes in ``feed_history`` for their figures
        only. It may decide at once, or during the first read, once a line tells that there is
        history to plan (the lines before it were fed in full). Default: none."""
        return None

    def feed_history(self, raw: bytes, line: int) -> bool:
        """Take one raw main-file line of the history planned by ``plan_history`` for its figures
        (usage, tool calls and result sizes, compactions, timestamps), without keeping its
        content; False: the line is not history (or not one this shortcut reads), and is
        decoded and given to ``feed`` as usual. Called for lines in file order, each once."""
        return False

    def history_read(self) -> None:
        """Called when the first read reached the end of the file: a last check of the planned
        history (set ``needs_full_read`` if it cannot stand)."""
        return None

    def companions(self) -> list[Path]:
        """Other files that belong to this session and should be followed too."""
        return []

    def feed_companion(self, path: Path, record: Any, line: int) -> None:
        """Apply one record of a companion file (see ``companions``)."""
        return None

    def snapshot(self) -> SessionState:
        return self.state

    def autocompact_at(self, context_window: int) -> int | None:
        """The prompt size at which the agent compacts on its own, or None if unknown."""
        return None

    def prompt_cache_ttl(self) -> float | None:
        """How long the agent's settings ask the prompt cache to keep a prefix, in seconds
        (None: they do not say; the layout profile's TTL applies)."""
        return None

    @classmethod
    def cli_window(cls, model: str | None) -> int | None:
        """The window the agent's CLI uses for ``model`` by its own rule, for a log that states
        none (None: no such rule; the model registry answers)."""
        return None

    def compacting(self) -> bool:
        """Whether the log shows a compaction started and not finished (default: it cannot)."""
        return False

    @classmethod
    def tailer(cls, path: Path, clock: Callable[[], float]) -> LineTailer | None:
        """For a path naming a session this agent keeps in a database: a tailer handing out its
        rows as JSON lines (None: ``path`` is a file, read as such)."""
        return None

    @classmethod
    def written(cls, path: Path) -> tuple[float, int] | None:
        """For a session in a database: when it was last written (epoch seconds) and the size of
        its store (None: not one of this agent's, or not there)."""
        return None

    @classmethod
    def misnamed(cls, path: Path) -> str | None:
        """For a file that holds this agent's sessions but is none itself (its database): what
        to name instead, in a few words (None: not such a file)."""
        return None

    @classmethod
    def store_changed(
        cls, path: Path, since: float
    ) -> tuple[Path, list[tuple[Path, float]]] | None:
        """For a changed file where this agent keeps sessions in a database (the database, its
        WAL): the database, and its sessions written since ``since`` (epoch seconds) with when.
        None: ``path`` is no such file."""
        return None

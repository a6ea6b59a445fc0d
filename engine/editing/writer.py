"""The contract of a format writer (one per agent log format)."""

from __future__ import annotations

import json
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from ctxtop.engine.editing.turns import Scan
from ctxtop.engine.errors import InputError
from ctxtop.engine.sessions.entries import typed
from ctxtop.engine.sessions.fork_mark import mark_last_line
from ctxtop.engine.sessions.json_lines import line_records


def text_id(value: Any) -> str | None:
    """An id from a log, if it is text (a log may hold a list or an object where an id goes)."""
    return value if isinstance(value, str) else None


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def encoded(value: Any, indent: int | None = None) -> bytes:
    """``value`` as JSON in UTF-8, compact (``dumps``) or indented. A string holding a lone
    surrogate (a log may escape one: "\\ud800") has no UTF-8 form: that value is written with
    every non-ASCII character escaped, as such a log holds it."""
    separators = (",", ":") if indent is None else (",", ": ")
    try:
        return json.dumps(value, ensure_ascii=False, indent=indent, separators=separators).encode(
            "utf-8"
        )
    except UnicodeEncodeError:
        return json.dumps(value, indent=indent, separators=separators).encode("ascii")


def jsonl_records(path: Path, data: bytes) -> list[Any]:
    """The lines of a JSONL file: the decoded value, or the raw bytes of a line that isn't JSON
    (kept byte for byte); an error naming ``path`` when there is none."""
    records = line_records(data)
    if not records:
        raise InputError(str(path), "empty session file")
    return records


def renamed_and_replaced(
    records: list[Any], old_id: str | None, new_id: str, replace: Callable[[dict[str, Any]], None]
) -> list[Any]:
    """``records`` with every string equal to ``old_id`` made ``new_id`` and ``replace`` run
    on every object, inner ones first (it changes the object in place), at any depth."""

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return new_id if old_id and value == old_id else value
        if isinstance(value, list):
            return [walk(item) for item in value]
        if not isinstance(value, dict):
            return value
        value = {key: walk(item) for key, item in value.items()}
        replace(value)
        return value

    def rewrite(record: Any) -> Any:
        if not isinstance(record, dict):
            return record
        try:
            return walk(record)
        except RecursionError:  # nested past Python's limit: no id or result of ours in it
            return record

    return [rewrite(record) for record in records]


def jsonl_bytes(records: list[Any]) -> bytes:
    out = bytearray()
    for record in records:
        out += record if isinstance(record, bytes) else encoded(record)
        out += b"\n"
    return bytes(out)


class Writer(ABC):
    """Built from the session's bytes (never the open file); ``render`` returns the fork's bytes.

    The session's lines are decoded once (``records``) and only read after: ``scan``, every
    ``render`` and the compaction source of the same bytes share them (a fork's records are
    copies of the ones it changes)."""

    agent: ClassVar[str]
    # The agent resumes a fork by a command (``resume_command``); False: the format has none.
    resumable: ClassVar[bool] = False
    # ``ctxtop restore`` can fork a session of this format at a compaction (``with_message``).
    supports_restore: ClassVar[bool] = False

    # The agent's typed record stream (engine/sessions/entries.py): the function its session
    # reader makes entries with (``Adapter.entry``), set with ``staticmethod``. None: the writer
    # reads the decoded values.
    entry_of: ClassVar[staticmethod[[Any, int], Any] | None] = None

    def __init__(
        self,
        path: Path,
        data: bytes,
        records: list[Any] | None = None,
        entries: list[Any] | None = None,
    ) -> None:
        """``records``: ``data``'s lines decoded already (``jsonl_records``' values: the
        session's reader was fed them, or a prefix of a session the caller decoded whole);
        ``entries``: the same lines as typed entries (``entry_of``'s), made already."""
        self.path = path
        self.data = data
        self._records = records
        self._entries = entries

    def records(self) -> list[Any]:
        """The session's lines (``jsonl_records``), decoded on the first call only."""
        if self._records is None:
            self._records = jsonl_records(self.path, self.data)
        return self._records

    def entries(self) -> list[Any]:
        """The session's lines as the agent's typed entries (a blank or bad line stays bytes),
        made on the first call only; the decoded values when the format has no entries."""
        if self._entries is None:
            entry_of = type(self).entry_of
            records = self.records()
            self._entries = records if entry_of is None else typed(records, entry_of)
        return self._entries

    @abstractmethod
    def scan(self) -> Scan:
        """Tool uses (in context order) and turns."""

    @abstractmethod
    def render(self, results: dict[str, str], inputs: dict[str, Any], session_id: str) -> bytes:
        """The fork: results and inputs replaced by call id, under the new ``session_id``."""

    def new_session_id(self) -> str:
        """A new session id for a fork, in the agent's own format (a UUID for most)."""
        return str(uuid.uuid4())

    @abstractmethod
    def fork_name(self, session_id: str) -> str:
        """The fork's file name (derived from ids only)."""

    def fork_dir(self) -> Path:
        """Where the fork goes: next to the session, where the agent looks for it."""
        return self.path.parent

    def resume_command(self, session_id: str, cwd: str | None) -> str | None:
        """The command that resumes the fork (None when the agent has none)."""
        return None

    def with_message(self, fork: bytes, line: int, text: str) -> bytes:
        """``fork`` (this session's lines, rendered under a new id) with one user message of
        ``text`` right after the compaction at ``line`` (after its summary): what the model sees
        next to the summary. Only for a format that ``supports_restore``."""
        raise NotImplementedError(f"{self.agent}: no restore")

    def mark(
        self,
        fork: bytes,
        context_tokens: int,
        session_id: str,
        usage: Mapping[str, tuple[int, int]] | None = None,
    ) -> bytes:
        """The rendered ``fork`` with ctxtop's estimate of its context and its ``session_id``
        marked on its last record (engine/sessions/fork_mark.py). ``usage``: (prompt, output)
        by message id, for a format whose fork holds usage ctxtop wrote."""
        return mark_last_line(fork, context_tokens, session_id)

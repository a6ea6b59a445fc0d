"""One fork transaction, shared by ``ctxtop edit`` and ``ctxtop compact``: prepare → preview →
write → read back → log.

``load`` reads the session's bytes once (whole lines) and the session from them, in memory. The
kind's own step (``forks/edit.py``, ``forks/compact.py``) renders the fork's bytes and reads them
back in memory (``read_back``) into a ``Preview``: nothing is on disk yet, and a fork that does
not read back is never written. ``commit`` writes exactly the previewed bytes atomically to a
new file, checks the agent's file was left alone, and records the action for ``ctxtop undo``;
it returns the ``Outcome``, whose ``as_json`` is what ``--json`` prints.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from ctxtop.engine.agents import AGENTS, compacts_unread, detect, stored_session
from ctxtop.engine.agents.base import Agent
from ctxtop.engine.agents.session_reader import agent_of, collector_paused, read_session_data
from ctxtop.engine.editing import action_log
from ctxtop.engine.editing.atomic import write_new
from ctxtop.engine.editing.offload import Offloader
from ctxtop.engine.editing.preview import CacheCost, WholeContext, sections
from ctxtop.engine.editing.writer import Writer
from ctxtop.engine.errors import CtxtopError, InputError
from ctxtop.engine.files import open_regular
from ctxtop.engine.paths import data_dir
from ctxtop.engine.sessions.adapter import DETECT_RECORDS
from ctxtop.engine.sessions.entries import EntryOf, typed
from ctxtop.engine.sessions.fork_mark import marked_fork
from ctxtop.engine.sessions.json_lines import session_records
from ctxtop.engine.sessions.ledger import Ledger, encoding_for
from ctxtop.engine.sessions.model import SessionState
from ctxtop.engine.sessions.tokenizer_factor import NONE, TokenizerFactor, learn
from ctxtop.engine.tokens.encoding import Encoding

EDITING, COMPACTING = "editing", "compacting"


def sha256(path: Path) -> str:
    """The file's hash, read through a read-only descriptor (a regular file only: a named pipe
    put under the name cannot make ctxtop wait); ``OSError`` if it cannot be read. A session in
    an agent's database: the hash of its rows as ``read_session_bytes`` takes them."""
    if stored_session(path) is not None:
        try:
            return hashlib.sha256(read_session_bytes(path)).hexdigest()
        except InputError as error:
            raise OSError(0, str(error).removeprefix(f"{path}: "), str(path)) from None
    digest = hashlib.sha256()
    with open(open_regular(path), "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def changed_since_read(source: Path, source_hash: str) -> list[str]:
    """A warning if the agent's file no longer hashes to ``source_hash``: it appended meanwhile
    (ctxtop never writes to it), so the fork lacks the newest lines. The fork is kept (and
    logged) so that undo can remove it, also if the file can no longer be read."""
    try:
        if sha256(source) == source_hash:
            return []
    except OSError as error:
        return [
            f"{source}: cannot read it again ({error.strerror or error}): "
            "the fork holds the session as first read"
        ]
    return [
        f"{source} changed while ctxtop read it (the agent is still writing?): "
        "the fork holds the session as first read"
    ]


def read_bytes(path: Path) -> bytes:
    try:
        with open(open_regular(path), "rb") as handle:
            return handle.read()
    except OSError as error:
        raise InputError(str(path), f"cannot read ({error.strerror})") from None


def whole_lines(data: bytes) -> bytes:
    """``data`` without a last line the agent is still writing (no newline yet, not JSON on its
    own), so a fork never ends in half a record; a one-document file is left as it is."""
    cut = data.rfind(b"\n") + 1
    tail = data[cut:]
    if not cut or not tail.strip():
        return data
    for candidate in (tail, data):
        try:
            json.loads(candidate)
            return data
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            continue
    return data[:cut]


def refuse_unsupported(source: Path, doing: str, agent: Agent | None = None) -> Agent | None:
    """One line naming the file when its agent, told from the first lines (or ``agent``, when
    known), cannot be ``doing`` (``EDITING`` or ``COMPACTING``) by its capability flags: said
    before the whole session is read (a multi-gigabyte log of such an agent is not read for
    nothing). Returns the agent (None: the first lines do not tell)."""
    agent = agent or agent_of(source)
    if agent is not None and not (agent.can_edit if doing == EDITING else agent.can_compact):
        raise InputError(str(source), f"{doing} {agent.name} sessions is not supported yet")
    return agent


def read_session_bytes(path: Path, upto: int | None = None) -> bytes:
    """The session's bytes as of now, whole lines only (the agent may be appending); ``upto``:
    only the first that many bytes (the sample a paused dashboard shows). A session in an
    agent's database: its rows as the reader takes them, one JSON line each."""
    stored = stored_session(path)
    if stored is not None:
        try:
            lines = stored[1].read().lines
        except OSError as error:
            raise InputError(str(path), f"cannot read ({error.strerror or error})") from None
        data = b"".join(raw + b"\n" for _, raw in lines)
        return data if upto is None else whole_lines(data[:upto])
    data = read_bytes(path)
    return whole_lines(data if upto is None else data[:upto])


@dataclass(slots=True)
class Loaded:
    """The session as first read: its bytes (what every fork of this transaction is made
    from, even if the agent appends meanwhile), their hash, and the session read from them.
    ``state`` is None for a log ctxtop compacts without reading it (``compacts_unread``).
    ``records``: the bytes' lines decoded once, which the session was read from and the fork
    writer keeps (None: a JSON document, decoded whole by each); ``entries``: the same lines
    as the agent's typed entries, made once by ``entry_of`` for the reader, the fork writer and
    the compaction source (None: the agent has none, or it was not told up front)."""

    path: Path
    data: bytes
    sha256: str
    state: SessionState | None
    records: list[Any] | None = field(default=None, repr=False)
    entries: list[Any] | None = field(default=None, repr=False)
    entry_of: EntryOf | None = field(default=None, repr=False)
    ledger: Ledger = field(default_factory=Ledger)  # the session's counts, made once
    # What every preview of this session would otherwise work out again (the edit's writer
    # and its scan of the bytes), by the kind of fork.
    shared: dict[str, Any] = field(default_factory=dict, repr=False)
    _sections: tuple[dict[str, int], int] | None = field(default=None, repr=False)
    _factor: TokenizerFactor | None = field(default=None, repr=False)
    _counts: dict[str, int] = field(default_factory=dict, repr=False)

    def counter(self, encoding: Encoding) -> Callable[[str], int]:
        """``encoding.count``, remembered for this session's texts: what one preview counted
        (tool results, rounds) the next does not count again."""
        counts = self._counts

        def count(text: str) -> int:
            tokens = counts.get(text)
            if tokens is None:
                tokens = counts[text] = encoding.count(text)
            return tokens

        return count

    def factor(self) -> TokenizerFactor:
        """The session's tokenizer factor (engine/sessions/tokenizer_factor.py): its forks'
        figures are counted with it too."""
        if self._factor is None:
            state = self.state
            self._factor = (
                NONE
                if state is None
                else learn(state, self.ledger, encoding_for(state), fit_calls=False)
            )
        return self._factor

    def sections(self) -> tuple[dict[str, int], int]:
        """Tokens of the session's context by section, and their total: counted once."""
        if self._sections is None:
            assert self.state is not None
            self._sections = sections(self.state, self.ledger, self.factor())
        return self._sections

    def writer(self, kind: type[Writer]) -> Writer:
        """The session's fork writer, made once: the session's lines, decoded once (the records
        the session was read from), serve every preview's scan and render and the compaction
        source's items."""
        found = self.shared.get("writer")
        if not isinstance(found, kind):
            entries = self.entries if self.entry_of is kind.entry_of else None
            found = self.shared["writer"] = kind(self.path, self.data, self.records, entries)
        return found

    def count_context(self) -> None:
        """Count the session's context once: every preview then counts only the text a fork
        changes."""
        state = self.state
        if state is None:
            return
        self.sections()
        self._counts.update(
            (block.content(), self.ledger.counted(block))
            for message in state.context
            for block in message.blocks
            if block.kind != "image"
        )

    def require_state(self, doing: str) -> SessionState:
        if self.state is None:
            raise InputError(str(self.path), f"{doing} this session is not supported yet")
        return self.state


class HeldSession(Protocol):
    """A session a caller already reads (the dashboard's, engine/live/session.py)."""

    def state_at(self, upto: int | None) -> SessionState | None:
        """A copy of the session as read up to ``upto`` bytes (None: as read so far), no
        longer changed by anyone; None when it is not at ``upto``."""


def load(
    path: Path, doing: str, upto: int | None = None, held: HeldSession | None = None
) -> Loaded:
    """Prepare: the session's bytes (read once), each line decoded once (for the reader and the
    fork writer alike) and the session read from them in memory, its context counted once
    (every preview then counts only the text a fork changes). ``held``: the session as the
    caller already holds it; when it is at ``upto``, its copy is the session and its bytes
    are read (and decoded, for the fork writer): the reader is not run again."""
    state = held.state_at(upto) if held is not None else None
    agent = refuse_unsupported(path, doing, AGENTS.get(state.agent) if state is not None else None)
    data = read_session_bytes(path, upto if state is None else state.bytes_read)
    with collector_paused():  # (decoding, entries and the read: the collector walks none)
        records = session_records(data)
        if state is not None and (records is None or len(records) != state.lines_read):
            state = None  # not the lines it was read from (the file was rewritten meanwhile)
        if agent is None and records:  # (a first line longer than ``agent_of`` looks at)
            agent = _agent_of_records(records)
        entry_of = agent.reader.entry if agent is not None else None
        entries = None  # (the held session's: made by the fork writer, when a preview asks)
        if state is None:
            entries = typed(records, entry_of) if records is not None and entry_of else None
            state = read_state(path, data, records, entries, doing)
    digest = hashlib.sha256(data).hexdigest()
    loaded = Loaded(path, data, digest, state, records, entries, entry_of if entries else None)
    loaded.count_context()
    return loaded


def _agent_of_records(records: list[Any]) -> Agent | None:
    """The agent whose reader claims the first of the decoded ``records``, as the reader tells."""
    head = [record for record in records[:DETECT_RECORDS] if type(record) is not bytes]
    found = detect(head)
    return AGENTS.get(found.agent) if found is not None else None


def read_state(
    path: Path, data: bytes, records: list[Any] | None, entries: list[Any] | None, doing: str
) -> SessionState | None:
    """The session read from ``data`` (its lines decoded already: ``records``, and made typed
    entries: ``entries``); None for a log ctxtop compacts without reading its records
    (``compacts_unread``)."""
    try:
        return read_session_data(path, data, records, entries)
    except InputError:
        if doing != COMPACTING or compacts_unread(data) is None:
            raise
        return None


def read_back(loaded: Loaded, fork: Path, data: bytes) -> tuple[SessionState, Ledger]:
    """The fork's ``data`` read as the agent will (in memory, before anything is written), and
    a ledger for it; an error names the agent's file: the fork does not exist. The fork's blocks
    that hold a text of the session take its count: only what the fork changed is counted."""
    try:
        after = read_session_data(fork, data)
    except InputError as error:
        reason = str(error).removeprefix(f"{error.path}: ")
        raise InputError(str(loaded.path), f"the edit would not read back ({reason})") from None
    ledger = Ledger()
    encoding = encoding_for(after)
    counts = loaded._counts
    for message in after.context:
        for block in message.blocks:
            tokens = counts.get(block.content()) if block.kind != "image" else None
            if tokens is not None:
                ledger.remember(block, tokens, encoding)
    return after, ledger


class Details(Protocol):
    """The kind's own figures: ``settings`` (what was asked) and ``figures`` (what it does) as
    ``--json`` names them, and ``logged``, what the action log records of them."""

    def settings(self) -> dict[str, Any]: ...

    def figures(self) -> dict[str, Any]: ...

    def logged(self) -> dict[str, Any]: ...


D = TypeVar("D", bound=Details, covariant=True)
K = TypeVar("K", bound=Details)  # the same, where a method takes the details


@dataclass(frozen=True, slots=True)
class Preview(Generic[D]):
    """A fork built and read back in memory: what ``commit`` writes, byte for byte. ``D``: the
    kind's details (``EditDetails``, ``CompactDetails``, ``RestoreDetails``)."""

    kind: str  # the action logged: "edit", "compact" or "restore"
    loaded: Loaded
    agent: str
    session_id: str  # the fork's
    fork_path: Path  # where it will be written
    fork_data: bytes
    resume_command: str | None  # what resumes the fork once written
    tokens_before: int  # what the log holds: tokenizer counts times the session's factor
    tokens_after: int
    context: WholeContext
    cache: CacheCost
    details: D
    warnings: tuple[str, ...] = ()
    offloader: Offloader | None = None  # files the fork points to, written just before it

    @property
    def tokens_source(self) -> str:
        """How ``tokens_before`` and ``tokens_after`` (and the cache rewrite) were counted:
        calibrated when the session's requests taught a tokenizer factor, else estimated."""
        return "calibrated" if self.loaded.factor().learned else "estimated"


@dataclass(frozen=True, slots=True)
class NewFork:
    """A fork before its bytes: its new session id, the writer that renders it, and the agent
    and directory its resume command names (what every kind's preview builds the same way)."""

    writer: Writer
    agent: str
    cwd: str | None
    session_id: str = ""  # the writer's new id when not given

    def __post_init__(self) -> None:
        if not self.session_id:
            object.__setattr__(self, "session_id", self.writer.new_session_id())

    @property
    def path(self) -> Path:
        """Where the fork will be written: where its agent looks for it."""
        return self.writer.fork_dir() / self.writer.fork_name(self.session_id)

    def preview(
        self,
        kind: str,
        loaded: Loaded,
        data: bytes,
        tokens: tuple[int, int],
        context: WholeContext,
        cache: CacheCost,
        details: K,
        *,
        usage: dict[str, tuple[int, int]] | None = None,
        warnings: tuple[str, ...] = (),
        offloader: Offloader | None = None,
    ) -> Preview[K]:
        """The fork's rendered ``data``, marked with ctxtop's estimate of its context (and the
        ``usage`` of its responses), as a preview of ``kind``; ``tokens``: before and after."""
        session_id = self.session_id
        return Preview(
            kind,
            loaded,
            self.agent,
            session_id,
            self.path,
            self.writer.mark(data, context.after, session_id, usage),
            self.writer.resume_command(session_id, self.cwd),
            *tokens,
            context,
            cache,
            details,
            warnings,
            offloader,
        )


@dataclass(frozen=True, slots=True)
class Outcome(Generic[D]):
    """The transaction's end: the fork written (or None for a dry run, or nothing to do)."""

    preview: Preview[D]
    fork: Path | None = None
    offloaded: tuple[Path, ...] = ()
    action_id: str | None = None
    warnings: tuple[str, ...] = ()  # the preview's and the write's
    dry_run: bool = False

    @property
    def session_id(self) -> str | None:
        return self.preview.session_id if self.fork else None

    @property
    def resume_command(self) -> str | None:
        return self.preview.resume_command if self.fork else None

    def as_json(self) -> dict[str, Any]:
        """What ``ctxtop edit --json`` / ``ctxtop compact --json`` print."""
        preview = self.preview
        outcome: dict[str, Any] = {
            "agent": preview.agent,
            "source": str(preview.loaded.path),
            "source_sha256": preview.loaded.sha256,
            "fork": str(self.fork) if self.fork else None,
            "session_id": self.session_id,
            "resume_command": self.resume_command,
            "dry_run": self.dry_run,
            **preview.details.settings(),
            "tokens_before": preview.tokens_before,
            "tokens_after": preview.tokens_after,
            "tokens_source": preview.tokens_source,
            "tokenizer_factor": preview.loaded.factor().value,
            **preview.context.figures(),
            **preview.details.figures(),
            **preview.cache.figures(),
            "warnings": list(self.warnings),
        }
        if preview.kind == "edit":
            outcome["offloaded"] = [str(path) for path in self.offloaded]
        if self.action_id is not None:
            outcome["action_id"] = self.action_id
        return outcome


def unwritten(preview: Preview[D], dry_run: bool) -> Outcome[D]:
    """The preview's outcome with nothing written (a dry run, or nothing worth a fork)."""
    return Outcome(preview, warnings=preview.warnings, dry_run=dry_run)


def commit(preview: Preview[D], *, logged: bool = True) -> Outcome[D]:
    """Write the previewed fork (its offloaded files first: a fork never points to a file that
    is not there) as a new file, atomically; warn if the agent's file changed meanwhile; log it.
    A failure leaves nothing written. ``logged=False`` (the demo's forks, in its temporary
    folder): nothing goes to the user's action log, so ``undo`` never lists them."""
    loaded = preview.loaded
    if data_dir().resolve() in preview.fork_path.resolve().parents:
        # A fork kept in ctxtop's own directory (an agent that imports it from anywhere).
        preview.fork_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    offloaded = preview.offloader.write() if preview.offloader is not None else []
    try:
        fork = write_new(
            preview.fork_path.parent,
            preview.fork_path.name,
            preview.fork_data,
            role="fork" if logged else None,
        )
    except CtxtopError:
        remove_files(offloaded)  # nothing would point to them
        raise
    warnings = (*preview.warnings, *changed_since_read(loaded.path, loaded.sha256))
    if marked_fork(preview.fork_data) != preview.session_id:
        warnings += (
            "the fork has no place for ctxtop's mark (a chat log without usage, say): "
            "ctxtop undo will not remove it; remove it yourself when done",
        )
    if not logged:
        return Outcome(preview, fork, tuple(offloaded), None, warnings)
    entry = action_log.record(
        preview.kind,
        [fork, *offloaded],
        source=str(loaded.path),
        source_sha256=loaded.sha256,
        fork=str(fork),
        fork_sha256=hashlib.sha256(preview.fork_data).hexdigest(),
        session_id=preview.session_id,
        agent=preview.agent,
        **preview.details.logged(),
        tokens_before=preview.tokens_before,
        tokens_after=preview.tokens_after,
        resume_command=preview.resume_command,
        offloaded=[str(path) for path in offloaded],
    )
    return Outcome(preview, fork, tuple(offloaded), str(entry["id"]), warnings)


def remove_files(paths: list[Path]) -> list[Path]:
    """Remove files a transaction wrote (and their directory once empty)."""
    removed: list[Path] = []
    for path in paths:
        if path.is_file():
            path.unlink()
            removed.append(path)
    for directory in {path.parent for path in paths}:
        with contextlib.suppress(OSError):  # not empty, or already gone
            directory.rmdir()
    return removed


def usage_estimates(after: SessionState, ledger: Ledger, whole: int) -> dict[str, tuple[int, int]]:
    """Each response of the fork's context by its message id: (its prompt, its output) as
    ctxtop estimates them, the whole context ``whole`` less the messages from it on."""
    sizes = ledger.message_sizes(after.context, encoding_for(after))
    remaining = sum(sizes)
    found: dict[str, tuple[int, int]] = {}
    for message, size in zip(after.context, sizes, strict=True):
        if message.role == "assistant":
            found[message.id] = (max(whole - remaining, 0), size)
        remaining -= size
    return found

"""``ctxtop restore``: a fork of the session at one of its compactions, which the agent resumes.

Two kinds: without items, the fork is the session up to just before compaction N (the history
up to the boundary, as it was: the compaction never happened); with items (``--with``), it is
the session up to the next compaction, the summary kept, and the chosen items compaction N
dropped (the inspector's ids: user messages, files, tool results) re-added right after the
summary as one clearly marked user message. The same transaction as ``edit`` and ``compact``
(engine/forks/transaction.py): the session's bytes read once, the fork read back in memory,
written atomically as a new file, logged for ``ctxtop undo``; the agent's file is never changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxtop.engine.agents import AGENTS
from ctxtop.engine.agents.session_reader import agent_of
from ctxtop.engine.editing.preview import priced_rewrite, sections, whole_context
from ctxtop.engine.errors import InputError
from ctxtop.engine.forks.compactions import (
    CompactionHistory,
    Entry,
    Inspection,
    before_line,
    inspect_compactions,
    line_starts,
    restore_refusal,
)
from ctxtop.engine.forks.transaction import (
    EDITING,
    Loaded,
    NewFork,
    Outcome,
    Preview,
    commit,
    load,
    read_back,
    unwritten,
)
from ctxtop.engine.words import plural

FORGOTTEN = "forgotten"  # ``--with forgotten``: every user message the summary does not carry
HEADER = "[ctxtop restore]"


@dataclass(frozen=True, slots=True)
class RestoreDetails:
    """A restore's own figures (``Preview.details``)."""

    compaction: int  # N, from 1 in log order
    line: int  # the compaction's line in the session
    kind: str  # "before": the history up to the compaction; "summary": it, and items re-added
    items: tuple[str, ...]  # the ids re-added
    message: str  # the message re-adding them ("" for "before")

    def settings(self) -> dict[str, Any]:
        return {"compaction": self.compaction, "restore": self.kind, "with": list(self.items)}

    def figures(self) -> dict[str, Any]:
        return {"compaction_line": self.line, "message": self.message}

    def logged(self) -> dict[str, Any]:
        return self.settings()


def chosen(path: Path, inspection: Inspection, wanted: Sequence[str]) -> list[Entry]:
    """The entries ``wanted`` names (ids such as U2, F1, T3, or ``forgotten``), each once, in
    the inspector's order; an id the compaction does not have, or one it kept, is an error."""
    by_id = {entry.id.upper(): entry for entry in inspection.entries}
    picked: dict[str, Entry] = {}
    for word in wanted:
        if word.lower() == FORGOTTEN:
            picked.update((entry.id, entry) for entry in inspection.forgotten)
            continue
        entry = by_id.get(word.upper())
        if entry is None:
            known = ", ".join(e.id for e in inspection.entries if e.fate != "kept") or "none"
            raise InputError(
                str(path),
                f"compaction {inspection.number} has no item {word!r} to re-add"
                f" (the items it did not keep: {known})",
            )
        if entry.fate == "kept":
            raise InputError(
                str(path),
                f"{entry.id} is still in the context after compaction {inspection.number}:"
                " nothing to re-add",
            )
        picked[entry.id] = entry
    order = [entry.id for entry in inspection.entries]
    return sorted(picked.values(), key=lambda entry: order.index(entry.id))


def readded_message(inspection: Inspection, entries: Sequence[Entry]) -> str:
    """One user message holding the items, marked as ctxtop's and saying where they are from."""
    lines = [
        f"{HEADER} The user asked ctxtop to re-add {plural(len(entries), 'item')} that the"
        f" compaction at line {inspection.line} (compaction {inspection.number}) left out of"
        " the summary above. They are as they were before that compaction; files may have"
        " changed since.",
    ]
    for entry in entries:
        what = {"user message": "User message", "file": "File", "tool result": "Tool result"}
        lines += ["", f"## {what[entry.kind]} {entry.id}: {entry.label}"]
        if entry.text:
            lines.append(entry.text)
        else:
            lines.append("(its content is not in the session log: read the file again)")
    return "\n".join(lines)


def preview_restore(
    loaded: Loaded, history: CompactionHistory, number: int, wanted: Sequence[str] = ()
) -> Preview[RestoreDetails]:
    """The restore fork of compaction ``number``, built and read back in memory."""
    state = loaded.require_state("restoring")
    refused = restore_refusal(state.agent)
    if refused is not None:
        raise InputError(str(loaded.path), refused)
    inspection = history.find(number)
    writer_class = AGENTS[state.agent].writer
    assert writer_class is not None
    starts = line_starts(loaded.data)
    entries = chosen(loaded.path, inspection, wanted) if wanted else []
    if wanted and not entries:
        raise InputError(str(loaded.path), f"compaction {number}: nothing to re-add")
    message = readded_message(inspection, entries) if entries else ""
    if entries:
        later = [c.line for c in history.compactions if c.line > inspection.line]
        data = before_line(loaded.data, starts, min(later, default=0))
    else:
        data = before_line(loaded.data, starts, inspection.line)
    if not data.strip():
        raise InputError(str(loaded.path), f"compaction {number}: nothing before it to restore")
    fork = NewFork(writer_class(loaded.path, data), state.agent, state.cwd)
    writer = fork.writer
    fork_data = writer.render({}, {}, fork.session_id)
    if entries:
        try:
            fork_data = writer.with_message(fork_data, inspection.line, message)
        except ValueError as error:
            raise InputError(str(loaded.path), f"cannot re-add items: {error}") from None
    read = read_back(loaded, fork.path, fork_data)
    tokens_before = loaded.sections()[1]
    tokens_after = sections(*read, loaded.factor())[1]
    saved = tokens_before - tokens_after
    context = whole_context(state, tokens_before, saved, None, loaded.ledger)
    details = RestoreDetails(
        number,
        inspection.line,
        "summary" if entries else "before",
        tuple(entry.id for entry in entries),
        message,
    )
    return fork.preview(
        "restore",
        loaded,
        fork_data,
        (tokens_before, tokens_after),
        context,
        priced_rewrite(state.model, tokens_after, max(saved, 0)),
        details,
    )


def restore_session(
    path: str | Path, number: int, wanted: Sequence[str] = (), *, dry_run: bool = False
) -> Outcome[RestoreDetails]:
    """The whole transaction (``ctxtop restore``): load, inspect, preview, and unless
    ``dry_run`` write."""
    path = Path(path)
    agent = agent_of(path)
    if agent is not None:
        refused = restore_refusal(agent.name)
        if refused is not None:
            raise InputError(str(path), refused)
    loaded = load(path, EDITING)
    state = loaded.require_state("restoring")
    history = inspect_compactions(loaded.path, loaded.data, state)
    preview = preview_restore(loaded, history, number, wanted)
    return unwritten(preview, dry_run=True) if dry_run else commit(preview)

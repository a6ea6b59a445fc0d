"""The compaction inspector: for every compaction in a session (the agent's own, its
microcompactions, and ctxtop's), what the context held just before it, what came through it
(kept verbatim, or carried by the summary) and what it dropped.

Each compaction is looked at through the readers and compaction sources ctxtop already has: the
session's lines before the compaction's, read by the agent's reader (one reader following the
bytes prefix after prefix, as a growing file is followed), are the context just before it; the
lines up to the next request (or the next compaction) what followed it. Both are turned into
the compaction source's items (engine/agents/<agent>/source.py; for an agent without one, the
reader's messages), so a tool result, a file read and a user's request are told apart the same
way ``ctxtop compact`` tells them.

A user message is *carried* when the summary holds enough of its distinctive content: the share
of its TF-IDF weight (engine/analysis/relevance.py, idf over the compacted part) in terms the
summary has too. Below ``CARRIED_AT`` it is a *forgotten instruction*. A file is *mentioned* when
the summary names it (its path or its file name); a tool result when the summary carries its
subject (the file it read, the command it ran) as a user message is carried.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from ctxtop.engine.agents import AGENTS
from ctxtop.engine.agents.session_reader import SessionReader, read_session_data
from ctxtop.engine.analysis.relevance import coverage, idf, terms
from ctxtop.engine.compaction.facts import command_of, one_line, read_paths
from ctxtop.engine.compaction.items import Call, Item
from ctxtop.engine.editing.action_log import absolute, read_actions
from ctxtop.engine.editing.placeholder import as_object as parse_input
from ctxtop.engine.editing.writer import jsonl_records
from ctxtop.engine.errors import InputError
from ctxtop.engine.forks.transaction import read_session_bytes
from ctxtop.engine.sessions.fork_mark import CTXTOP_TRIGGER
from ctxtop.engine.sessions.ledger import encoding_for
from ctxtop.engine.sessions.model import Compaction, Microcompaction, SessionState

# A user message whose distinctive content the summary carries less than this share of is
# flagged as a forgotten instruction; a tool result's subject likewise counts as mentioned.
CARRIED_AT = 0.5
Fate = Literal["kept", "summarised", "dropped"]
EntryKind = Literal["user message", "file", "tool result"]
PREFIX = {"user message": "U", "file": "F", "tool result": "T"}
Count = Callable[[str], int]


@dataclass(frozen=True, slots=True)
class Size:
    """One row of the context by kind: ``name`` is the tool or the file ("" for the kind)."""

    kind: str
    name: str
    count: int
    tokens: int  # tokenizer estimate


@dataclass(frozen=True, slots=True)
class Entry:
    """A user message, file or tool result of the context just before a compaction, and what
    the compaction did with it. ``id`` is what ``ctxtop restore --with`` takes."""

    id: str
    kind: EntryKind
    label: str  # the message's first words, the file's path, the tool and its subject
    tokens: int  # tokenizer estimate
    fate: Fate  # kept verbatim, carried by the summary, or dropped
    coverage: float | None  # user messages: the share of their content the summary carries
    text: str  # what a restore re-adds

    @property
    def forgotten(self) -> bool:
        """A user message whose instructions the summary does not carry."""
        return self.kind == "user message" and self.fate == "dropped"


@dataclass(frozen=True, slots=True)
class Inspection:
    """One compaction (N from 1, in log order) as the inspector sees it."""

    number: int
    kind: Literal["compaction", "microcompaction"]
    line: int
    trigger: str
    timestamp: str | None
    tokens_before: int | None  # the agent's figure
    tokens_after: int | None  # the whole context after, as every view shows it
    after_source: str  # reported, estimated or inferred (see ``Compaction.after_source``)
    before: tuple[Size, ...]  # the context just before, by kind
    after: tuple[Size, ...]  # right after (until the next compaction's part begins)
    summary_tokens: int | None  # None: nothing summarised, or the summary is not logged yet
    replaced_tokens: int  # what the compaction took out of the context (summarised or dropped)
    entries: tuple[Entry, ...]

    def of(self, kind: EntryKind) -> tuple[Entry, ...]:
        return tuple(entry for entry in self.entries if entry.kind == kind)

    @property
    def forgotten(self) -> tuple[Entry, ...]:
        return tuple(entry for entry in self.entries if entry.forgotten)

    @property
    def dropped(self) -> tuple[Entry, ...]:
        return tuple(entry for entry in self.entries if entry.fate == "dropped")


@dataclass(frozen=True, slots=True)
class CompactionHistory:
    """Every compaction of one session, in log order."""

    path: Path
    agent: str
    compactions: tuple[Inspection, ...]
    restore_refused: str | None  # why ``ctxtop restore`` cannot fork this agent's sessions

    @property
    def summary_growth(self) -> tuple[int | None, ...]:
        """Each summary's size, compaction after compaction (microcompactions write none)."""
        return tuple(c.summary_tokens for c in self.compactions if c.kind == "compaction")

    def find(self, number: int) -> Inspection:
        if not 1 <= number <= len(self.compactions):
            count = len(self.compactions)
            has = f"{count} compaction{'s' if count != 1 else ''}" if count else "no compaction"
            raise InputError(str(self.path), f"no compaction {number}: the session has {has}")
        return self.compactions[number - 1]


# -- the session's compactions, and its bytes around each ------------------------------------


Point = tuple[int, Compaction | Microcompaction]


def points(state: SessionState, decided: Sequence[Compaction] = ()) -> list[Point]:
    """The compactions and microcompactions in log order; ``decided``: the same compactions with
    their "after" as the caller's views decided it (engine/live/whole.py), by line."""
    by_line = {item.line: item for item in decided}
    found: list[Point] = [(c.line, by_line.get(c.line, c)) for c in state.compactions]
    found += [(m.line, m) for m in state.microcompactions]
    return sorted(found, key=lambda point: point[0])


def line_starts(data: bytes) -> list[int]:
    """The byte offset each line starts at (line 1 at index 0)."""
    starts = [0]
    at = data.find(b"\n")
    while at >= 0:
        starts.append(at + 1)
        at = data.find(b"\n", at + 1)
    return starts


def before_line(data: bytes, starts: list[int], line: int) -> bytes:
    """The bytes of the lines before ``line`` (the whole file past its last line)."""
    return data[: starts[line - 1]] if 0 < line <= len(starts) else data


# -- items --------------------------------------------------------------------------------


def items_of(path: Path, data: bytes) -> list[Item]:
    """The context ``data`` holds, as the agent's compaction source gives it (the reader's
    messages for an agent without one); none when the bytes hold no session yet."""
    return Prefixes(path, data).items(0)


class Prefixes:
    """The context as items at growing prefixes of one session's bytes (each line read once,
    by one reader, as a file followed live is read): the compactions of a long session are
    looked at in one pass, not one read of the file each."""

    def __init__(self, path: Path, data: bytes) -> None:
        self.path, self.data = path, data
        self.starts = line_starts(data)
        self.reader = SessionReader(path, data=b"")
        self._records: list[Any] | None = None  # the lines' records, parsed once

    def items(self, line: int) -> list[Item]:
        """The context of the lines before ``line`` (0: all of them); lines only grow."""
        prefix = before_line(self.data, self.starts, line)
        if prefix.isspace() or not prefix:  # (isspace stops at the first other byte)
            return []
        self.reader.grow(prefix)
        self.reader.poll(as_it_stands=True)
        state = self.reader.state
        if state is None:
            return []
        plugin = AGENTS.get(state.agent)
        source = plugin.source if plugin is not None else None
        if source is None:
            return state_items(state)
        if self._records is None:
            self._records = jsonl_records(self.path, self.data)
        parsed = self._records[: line - 1] if line else self._records
        return source(self.path, prefix, state, parsed=parsed).items()


def state_items(state: SessionState) -> list[Item]:
    """The reader's context as items (Gemini CLI, Copilot CLI: no compaction source)."""
    items: list[Item] = []
    calls: dict[str, Call] = {}
    for message in state.context:
        text = "\n".join(b.content() for b in message.blocks if b.kind == "text")
        if message.role in ("system", "developer") or message.kind == "instructions":
            items.append(Item(message.id, message.role, "standing", text))
        elif message.kind == "compact_summary":
            items.append(Item(message.id, "user", "summary", text))
        elif message.kind in ("attachment", "meta"):
            items.append(Item(message.id, "user", message.kind, text))  # type: ignore[arg-type]
        elif message.role == "assistant":
            item = Item(message.id, "assistant", "message", text)
            for block in message.blocks:
                if block.kind == "tool_use" and block.tool_call_id:
                    value = block.raw if block.raw is not None else block.text
                    call = Call(block.tool_call_id, block.tool_name or "tool", parse_input(value))
                    calls[block.tool_call_id] = call
                    item.calls.append(call)
            items.append(item)
        else:
            results = [b for b in message.blocks if b.kind == "tool_result"]
            for block in results:
                found = calls.get(block.tool_call_id or "")
                if found is not None:
                    found.result, found.is_error = block.content(), block.is_error
            kind = "tool_result" if results else "request" if text.strip() else "meta"
            items.append(Item(message.id, message.role, kind, text))  # type: ignore[arg-type]
    return items


def _calls(items: Sequence[Item]) -> list[Call]:
    return [call for item in items for call in item.calls]


def subject(call: Call) -> str:
    """What a call was about: the file it read, the command it ran, else its input."""
    paths = read_paths(call)
    return paths[0] if paths else command_of(call) or one_line(str(call.input), 120)


def sizes(items: Sequence[Item], count: Count) -> tuple[Size, ...]:
    """The context by kind: user messages, assistant text, tool calls and tool results by
    tool, attachments, the previous summary, standing context, other injected text."""
    rows: dict[tuple[str, str], list[int]] = {}

    def add(kind: str, name: str, tokens: int) -> None:
        row = rows.setdefault((kind, name), [0, 0])
        row[0] += 1
        row[1] += tokens

    names = {
        "request": "user messages",
        "message": "assistant text",
        "standing": "standing context",
        "summary": "summary",
        "attachment": "attachments",
    }
    for item in items:
        if item.text.strip():
            kind = names.get(item.kind, "other")
            add("assistant text" if item.role == "assistant" else kind, "", count(item.text))
        for call in item.calls:
            add("tool calls", call.name, count(str(call.input)))
            if call.result is not None:
                add("tool results", call.name, count(call.result))
    return tuple(Size(kind, name, n, tokens) for (kind, name), (n, tokens) in rows.items())


# -- what came through --------------------------------------------------------------------


def _key(item: Item) -> tuple[str, str]:
    return item.role, " ".join(item.text.split())


def stemmed(counts: Counter[str]) -> Counter[str]:
    """Terms with a plural or third-person "s" taken off ("tests" is "test", "raises" is
    "raise"): a summary restates an instruction in other forms of its words."""
    found: Counter[str] = Counter()
    for term, count in counts.items():
        plain = (
            term[:-1] if len(term) > 3 and term.endswith("s") and not term.endswith("ss") else term
        )
        found[plain] += count
    return found


class Carrier:
    """The summary's terms, and the idf of the compacted part's documents, to tell how much of
    a text the summary carries."""

    def __init__(self, summary: str, documents: Sequence[str]) -> None:
        self.summary = summary
        self.terms = stemmed(terms(summary))
        frequency: Counter[str] = Counter()
        for document in documents:
            frequency.update(stemmed(terms(document)).keys())
        total = len(documents)
        self._weight: Callable[[str], float] = lambda term: idf(frequency[term], total)

    def covers(self, text: str) -> float:
        if not self.summary:
            return 0.0
        return coverage(stemmed(terms(text)), self.terms, self._weight)

    def names(self, path: str) -> bool:
        name = PurePosixPath(path).name or path
        return bool(self.summary) and (path in self.summary or name in self.summary)


def entries(
    before: Sequence[Item], after: Sequence[Item], summary: str, count: Count
) -> tuple[Entry, ...]:
    """The user messages, files read and tool results before the compaction, each kept (in the
    context after it as it was), summarised (carried or named by the summary) or dropped."""
    kept_texts = {_key(item) for item in after}
    kept_results = {(c.call_id, c.result) for c in _calls(after) if c.result is not None}
    part = [item for item in before if item.kind != "standing"]
    # A file is kept when it is attached after the compaction, or a read of it still is.
    kept_files = {name for item in after for name in item.files} | {
        path
        for c in _calls(part)
        if (c.call_id, c.result) in kept_results
        for path in read_paths(c)
    }
    documents = [item.text for item in part if item.text.strip()]
    documents += [c.result for c in _calls(part) if c.result]
    carrier = Carrier(summary, documents)
    found: list[Entry] = []

    def add(
        kind: EntryKind, label: str, tokens: int, fate: Fate, score: float | None, text: str
    ) -> None:
        number = sum(1 for entry in found if entry.kind == kind) + 1
        found.append(Entry(f"{PREFIX[kind]}{number}", kind, label, tokens, fate, score, text))

    for item in part:
        if item.kind != "request":
            continue
        if _key(item) in kept_texts:
            add("user message", one_line(item.text, 80), count(item.text), "kept", 1.0, item.text)
            continue
        score = round(carrier.covers(item.text), 3)
        fate: Fate = "summarised" if score >= CARRIED_AT else "dropped"
        add("user message", one_line(item.text, 80), count(item.text), fate, score, item.text)
    files: dict[str, list[str]] = {}
    for item in part:
        for name in item.files:
            files.setdefault(name, []).append("")
        for call in item.calls:
            for path in read_paths(call):
                files.setdefault(path, []).append(call.result or "")
    for path, reads in files.items():
        text = next((read for read in reversed(reads) if read), "")
        tokens = sum(count(read) for read in reads if read)
        fate = "kept" if path in kept_files else "summarised" if carrier.names(path) else "dropped"
        add("file", path, tokens, fate, None, text)
    for call in _calls(part):
        if call.result is None:
            continue
        about = subject(call)
        if (call.call_id, call.result) in kept_results:
            fate = "kept"
        elif call.call_id in summary or carrier.covers(about) >= CARRIED_AT:
            fate = "summarised"
        else:
            fate = "dropped"
        label = f"{call.name} {one_line(about, 80)}"
        add("tool result", label, count(call.result), fate, None, call.result)
    return tuple(found)


def _summary(after: Sequence[Item]) -> str | None:
    """The summary the compaction wrote: the last one in the context right after it (the same
    text as the one before when the agent summarised nothing new)."""
    found = [item.text for item in after if item.kind == "summary"]
    return found[-1] if found else None


def inspect_point(
    number: int, point: Point, before: list[Item], after: list[Item], count: Count
) -> Inspection:
    line, event = point
    micro = isinstance(event, Microcompaction)
    summary = None if micro else _summary(after)
    found = entries(before, after, summary or "", count)
    standing = {_key(item) for item in before if item.kind == "standing"}
    kept = {_key(item) for item in after}
    replaced = sum(
        count(item.text) for item in before if _key(item) not in kept and _key(item) not in standing
    )
    kept_results = {(c.call_id, c.result) for c in _calls(after)}
    for call in _calls(before):
        if (call.call_id, call.result) not in kept_results:
            replaced += count(str(call.input)) + count(call.result or "")
    if isinstance(event, Microcompaction):
        tokens_after = (
            None
            if event.pre_tokens is None or event.tokens_saved is None
            else (event.pre_tokens - event.tokens_saved)
        )
        after_source = "reported"
        kind: Literal["compaction", "microcompaction"] = "microcompaction"
    else:
        tokens_after = event.after_tokens if event.after_tokens is not None else event.post_tokens
        after_source, kind = event.after_source(), "compaction"
    return Inspection(
        number,
        kind,
        line,
        event.trigger,
        event.timestamp,
        event.pre_tokens,
        tokens_after,
        after_source,
        sizes(before, count),
        sizes(after, count),
        None if summary is None else count(summary),
        replaced,
        found,
    )


def made_from(fork: Path) -> list[Item]:
    """The context of the session a fork ctxtop compacted was made from (a Claude Code fork
    starts at its compaction: what it replaced is in that session), from ctxtop's action log;
    none when the log does not name it or the session changed since."""
    for action in reversed(read_actions()):
        if action.get("kind") != "compact" or action.get("fork") != absolute(str(fork)):
            continue
        source = Path(str(action.get("source")))
        try:
            data = read_session_bytes(source)
        except InputError:
            return []
        if hashlib.sha256(data).hexdigest() != action.get("source_sha256"):
            return []
        return items_of(source, data)
    return []


def restore_refusal(agent: str) -> str | None:
    plugin = AGENTS.get(agent)
    if plugin is None or not plugin.can_restore:
        return (
            f"restore is not possible for {agent} sessions:"
            " ctxtop cannot write a fork of them at a compaction yet"
        )
    return None


def inspect_compactions(
    path: Path,
    data: bytes,
    state: SessionState,
    decided: Sequence[Compaction] = (),
) -> CompactionHistory:
    """Every compaction of the session ``data`` holds (read into ``state``), in log order.
    ``decided``: the compactions with their "after" as the other views show it."""
    found = points(state, decided)
    count = _counter(state)
    responses = sorted(state.request_lines)
    prefixes = Prefixes(path, data)
    inspected: list[Inspection] = []
    for index, point in enumerate(found):
        line = point[0]
        before = prefixes.items(line)
        if not before and index == 0 and point[1].trigger == CTXTOP_TRIGGER:
            before = made_from(path)
        # Right after: up to the next request (or the next compaction, or the end).
        upto = [found[index + 1][0]] if index + 1 < len(found) else []
        upto += [at for at in responses[bisect_right(responses, line) :][:1]]
        after = prefixes.items(min(upto, default=0))
        inspected.append(inspect_point(index + 1, point, before, after, count))
    return CompactionHistory(path, state.agent, tuple(inspected), restore_refusal(state.agent))


def inspect_file(
    path: Path, upto: int | None = None, decided: Sequence[Compaction] = ()
) -> CompactionHistory:
    """``inspect_compactions`` of the session file as it stands (``upto``: its first that many
    bytes, the sample a dashboard shows); an error names the file."""
    data = read_session_bytes(path, upto)
    return inspect_compactions(path, data, read_session_data(path, data), decided)


def _counter(state: SessionState) -> Count:
    encoding = encoding_for(state)
    counts: dict[str, int] = {}

    def count(text: str) -> int:
        tokens = counts.get(text)
        if tokens is None:
            tokens = counts[text] = encoding.count(text) if text else 0
        return tokens

    return count

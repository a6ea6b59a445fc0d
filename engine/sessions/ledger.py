"""``Ledger``: the tokenizer counts of one session's content, kept beside its ``SessionState``.

The session model holds what the log says; what ctxtop estimates from it lives here, so reading,
reporting, editing and compacting never change the model. A ledger counts lazily, only what a
figure asks for (the messages after the last request for the context figure, the context for the
breakdown and the analysis, the tool results for the tool table), and each block or result once:
a live session keeps one ledger between updates, a one-shot report or a fork makes its own.

Counts are keyed by the identity of the block or tool call; a ledger forgets them all when the
session's encoding changes (a model named later in the log), and forgets a message's blocks
when the message leaves the context (a compaction, a rewind).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ctxtop.engine.models.registry import lookup
from ctxtop.engine.sessions import model
from ctxtop.engine.sessions.model import Block, Message, SessionState, ToolCall
from ctxtop.engine.sessions.tool_calls import ArchivedTotal
from ctxtop.engine.tokens import get_encoding
from ctxtop.engine.tokens.cache import CachedCounter, default_disk_cache
from ctxtop.engine.tokens.encoding import LARGE_TEXT, Encoding

DEFAULT_ENCODING = "o200k_base"

# Claude Code's own estimate for an image or document block (agent-log-formats.md §1.6).
IMAGE_TOKENS = 2000
# From this many texts on, counts go through the on-disk cache; a live append's one or two
# texts are counted directly (a disk write per append would cost more than it saves).
BULK = 32
# Characters per token assumed for a result size when no result was counted to measure it.
CHARS_PER_TOKEN = 4
# A tool's results are estimated with their own tokens per character once this share of the
# counted characters is theirs.
MEASURED_SHARE = 0.01

BREAKDOWN_ORDER = (
    "instructions",
    "user",
    "assistant",
    "thinking",
    "tool_calls",
    "tool_results",
    "attachments",
    "compact_summary",
    "images",
    "other",
)

_CACHED: dict[str, CachedCounter] = {}

_NONE = (0, 0, 0, 0, 0, 0)  # a tool's row in ``_ToolTally.names`` before any live call


def encoding_for(state: SessionState) -> Encoding:
    """The tokenizer of the session's model (the registry's; o200k_base when unknown)."""
    name = lookup(state.model).encoding or DEFAULT_ENCODING
    try:
        return get_encoding(name)
    except Exception:
        return get_encoding(DEFAULT_ENCODING)


def cached(encoding: Encoding) -> CachedCounter:
    """A counter for bulk counts that remembers counts on disk, so re-opening a session does not
    tokenize its history again."""
    counter = _CACHED.get(encoding.name)
    if counter is None:
        counter = _CACHED[encoding.name] = CachedCounter(encoding, default_disk_cache())
    return counter


def counter_for(texts: Sequence[str], encoding: Encoding) -> Encoding | CachedCounter:
    """The cached counter for a bulk count or a text over ``LARGE_TEXT`` (a big tool result is
    counted for its block and for its tool's total: the second count is a look-up), else the
    encoding itself."""
    if len(texts) >= BULK or any(len(text) > LARGE_TEXT for text in texts):
        return cached(encoding)
    return encoding


def category(message: Message, block: Block) -> str:
    """The kind of content a block is, for the context breakdown."""
    if block.kind == "image":
        return "images"
    if message.kind == "attachment":
        return "attachments"
    if message.kind == "compact_summary":
        return "compact_summary"
    if block.kind == "thinking":
        return "thinking"
    if block.kind == "tool_use":
        return "tool_calls"
    if block.kind == "tool_result":
        return "tool_results"
    if message.role in ("system", "developer") or message.kind == "instructions":
        return "instructions"
    if message.role in ("user", "assistant"):
        return message.role
    return "other"


@dataclass(frozen=True, slots=True)
class ToolTotal:
    """Calls and result tokens of one tool name, each call counted once by its id."""

    name: str
    calls: int
    result_tokens: int
    persisted_outputs: int  # results whose full output the agent saved to a file
    # Some of ``result_tokens`` is estimated from result sizes (results older than the newest
    # ``RESULT_BUDGET`` characters of results, long gone from the context: ``_ToolTally``).
    estimated: bool = False


@dataclass(frozen=True, slots=True)
class CategoryTotal:
    name: str  # one of BREAKDOWN_ORDER
    tokens: int
    blocks: int


class _Shares:
    """Each context message's tokens and blocks by category, updated by the change since the
    last look: messages no longer on the context are taken back, new ones added; the last one
    is always taken again in case it grew."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.shares: list[tuple[Counter[str], Counter[str]]] = []
        self.tokens: Counter[str] = Counter()
        self.blocks: Counter[str] = Counter()

    def gone(self, context: Sequence[Message]) -> list[Message]:
        """Drop what no longer matches ``context`` (kept: the shared prefix, less the last
        message of the context); returns the messages dropped."""
        limit = min(len(self.messages), len(context))
        keep = 0
        while keep < limit and self.messages[keep] is context[keep]:
            keep += 1
        keep = min(keep, max(len(context) - 1, 0))
        for tokens, blocks in self.shares[keep:]:
            self.tokens.subtract(tokens)
            self.blocks.subtract(blocks)
        dropped = self.messages[keep:]
        del self.messages[keep:]
        del self.shares[keep:]
        return dropped

    def add(self, message: Message, counts: Sequence[int]) -> None:
        tokens: Counter[str] = Counter()
        blocks: Counter[str] = Counter()
        for block, count in zip(message.blocks, counts, strict=True):
            name = category(message, block)
            tokens[name] += count
            blocks[name] += 1
        self.messages.append(message)
        self.shares.append((tokens, blocks))
        self.tokens.update(tokens)
        self.blocks.update(blocks)


class _Result:
    """What one tool call adds to the tools table."""

    __slots__ = ("call", "chars", "counted", "name", "persisted", "tokens")

    def __init__(self, call: ToolCall) -> None:
        self.call = call  # kept alive: entries are keyed by its id
        self.name = call.name
        self.chars = call.result_chars
        self.persisted = call.persisted_to is not None
        self.tokens = 0  # the tokenizer's count, when among the newest and counted
        self.counted = False


class _ToolTally:
    """Calls and result tokens per tool name, kept up to date change by change.

    Results are counted with the tokenizer only among the newest ``RESULT_BUDGET`` characters
    of results (a result is counted while the results newer than it hold fewer characters than
    that): a long session's older results left the context long ago, and tokenizing them all
    cost most of a cold report (13,870 results of a 100 MB log: 0.6 s). An older result counts
    its characters times the tokens per character measured on the counted ones, and its tool's
    row is marked estimated. The rule depends only on the session's results in the order they
    came, so a session followed live and the same file read cold give the same table; the
    session keeps the texts of at least these newest results (``SessionState``).
    """

    def __init__(self) -> None:
        self.results: dict[int, _Result] = {}  # id(call) -> its latest contribution
        # call id -> an estimated (or empty) result's contribution, packed: characters * 2 +
        # persisted (its row: the call's name). Most of a long session's calls end here, so
        # each costs a dict entry (keyed by the call's own id string), not a ``_Result``.
        self.settled: dict[str, int] = {}
        self.newest: dict[int, _Result] = {}  # the counted ones, oldest first
        # Those of ``newest`` not counted yet: an update counts only them, not every result of
        # the budget's worth (thousands in a long session) to find them.
        self.uncounted: dict[int, _Result] = {}
        self.newest_chars = 0
        self.counted_tokens = 0  # of the results counted now (``newest``)
        self.counted_chars = 0
        # name -> [calls, counted tokens, estimated characters, estimated results, persisted,
        # counted characters]
        self.names: dict[str, list[int]] = {}

    def update(
        self,
        changes: Sequence[ToolCall],
        encoding: Encoding,
        archived: Mapping[str, ArchivedTotal],
    ) -> tuple[ToolTotal, ...]:
        """Take in ``changes``; the rows add the sums of the session's ``archived`` calls
        (whose results the session let go of: estimated, and never tallied here)."""
        # Each call once, where it last changed: the order the results came in.
        latest = []
        for call in reversed({id(call): call for call in reversed(changes)}.values()):
            if call.archived:  # (counted in the archive's sums from now on)
                old = self.results.pop(id(call), None)
                if old is not None:
                    self._take_back(old)
                else:
                    self._take_back_settled(call)
            else:
                latest.append(call)
        # Those older than the newest budget's worth of them are estimated at once (a cold
        # read's history: not queued among the counted ones to be moved out again).
        first_counted, newer = len(latest), 0
        for index in range(len(latest) - 1, -1, -1):
            if newer >= model.RESULT_BUDGET:
                break
            first_counted = index
            newer += latest[index].result_chars
        for index, call in enumerate(latest):
            old = self.results.pop(id(call), None)
            if old is not None:
                self._take_back(old)
            else:
                self._take_back_settled(call)
            row = self.names.setdefault(call.name, [0, 0, 0, 0, 0, 0])
            row[0] += 1
            persisted = call.persisted_to is not None
            row[4] += persisted
            chars = call.result_chars
            if call.result_text is None and not chars:
                self.results[id(call)] = _Result(call)  # no result yet
            elif index >= first_counted:
                entry = self.results[id(call)] = _Result(call)
                self.newest[id(call)] = entry
                self.uncounted[id(call)] = entry
                self.newest_chars += entry.chars
            else:
                self.settled[call.call_id] = chars * 2 + persisted
                if chars:
                    row[2] += chars
                    row[3] += 1
        self._slide()
        self._count(encoding)
        return self._rows(archived)

    def _take_back(self, entry: _Result) -> None:
        """Take back a counted result, or a call with no result yet."""
        row = self.names[entry.name]
        row[0] -= 1
        row[4] -= entry.persisted
        if id(entry.call) in self.newest:
            self._leave_newest(entry, row)

    def _take_back_settled(self, call: ToolCall) -> None:
        packed = self.settled.pop(call.call_id, None)
        if packed is None:
            return
        row = self.names[call.name]
        row[0] -= 1
        row[4] -= packed & 1
        if packed > 1:
            row[2] -= packed >> 1
            row[3] -= 1

    def _estimate(self, entry: _Result) -> None:
        """Move a result out of the counted ones (settled: it is estimated from now on)."""
        row = self.names[entry.name]
        self._leave_newest(entry, row)
        del self.results[id(entry.call)]
        self.settled[entry.call.call_id] = entry.chars * 2 + entry.persisted
        if entry.chars:  # (an empty result estimates nothing)
            row[2] += entry.chars
            row[3] += 1

    def _leave_newest(self, entry: _Result, row: list[int]) -> None:
        """Take a result out of the newest ones, and its count out of its tool's row."""
        del self.newest[id(entry.call)]
        self.uncounted.pop(id(entry.call), None)
        self.newest_chars -= entry.chars
        self._uncount(entry, row)

    def _uncount(self, entry: _Result, row: list[int]) -> None:
        if entry.counted:
            row[1] -= entry.tokens
            row[5] -= entry.chars
            self.counted_tokens -= entry.tokens
            self.counted_chars -= entry.chars
        entry.tokens, entry.counted = 0, False

    def _slide(self) -> None:
        newest = self.newest
        while newest:
            oldest = next(iter(newest.values()))
            if self.newest_chars - oldest.chars < model.RESULT_BUDGET:
                return
            self._estimate(oldest)

    def _count(self, encoding: Encoding) -> None:
        pending = list(self.uncounted.values())
        self.uncounted.clear()  # counted below, or estimated
        for entry in pending:
            if entry.call.result_text is None:
                self._estimate(entry)  # the session let its text go: not expected, estimable
        pending = [entry for entry in pending if id(entry.call) in self.newest]
        if not pending:
            return
        texts = [entry.call.result_text or "" for entry in pending]
        counts = counter_for(texts, encoding).count_batch(texts)
        for entry, tokens in zip(pending, counts, strict=True):
            entry.tokens, entry.counted = tokens, True
            row = self.names[entry.name]
            row[1] += tokens
            row[5] += entry.chars
            self.counted_tokens += tokens
            self.counted_chars += entry.chars

    def _rows(self, archived: Mapping[str, ArchivedTotal]) -> tuple[ToolTotal, ...]:
        chars = self.counted_chars
        overall = self.counted_tokens / chars if chars else 1 / CHARS_PER_TOKEN
        measured = max(model.RESULT_BUDGET * MEASURED_SHARE, 1)
        rows = []
        for name in self.names.keys() | archived.keys():
            calls, tokens, guessed, estimated, persisted, counted = self.names.get(name, _NONE)
            more = archived.get(name)
            if more is not None:
                calls += more.calls
                guessed += more.chars
                estimated += more.results
                persisted += more.persisted
            if not calls:
                continue
            if guessed:
                # The tool's own ratio when enough of its results were counted (a tool's output
                # has its own mix: code, JSON, logs), else the ratio over all counted results.
                per_char = tokens / counted if counted >= measured else overall
                tokens += round(guessed * per_char)
            rows.append(ToolTotal(name, calls, tokens, persisted, estimated > 0))
        return tuple(sorted(rows, key=lambda row: (-row.result_tokens, row.name)))


Item = TypeVar("Item")


class Ledger:
    """What the samples of one session keep between them: its token counts (its sub-agents'
    blocks too), in one encoding at a time, and the copies of its only-appended lists."""

    def __init__(self) -> None:
        self._forget(None)
        self._copied_of: SessionState | None = None  # the state the copies were made of
        self._copied: dict[str, tuple[object, list[Any]]] = {}  # name -> (terms, copies)

    def copies(
        self,
        state: SessionState,
        name: str,
        items: Sequence[Item],
        copy: Callable[[Item], Item],
        terms: object = None,
    ) -> tuple[Item, ...]:
        """The copies of ``state``'s list ``items`` (only ever appended to), kept between
        samples: a sample copies the newest item again (a reader may still complete it: a
        compaction's "after" figure arrives with the next request) and the items added since,
        not the whole history of them."""
        if state is not self._copied_of:  # another state: a reader that read its file again
            self._copied_of, self._copied = state, {}
        known = self._copied.get(name)
        if known is None or known[0] != terms or len(known[1]) > len(items):
            known = self._copied[name] = (terms, [])
        copies = known[1]
        settled = max(len(copies) - 1, 0)
        del copies[settled:]
        copies.extend(copy(item) for item in items[settled:])
        return tuple(copies)

    def _forget(self, encoding: str | None) -> None:
        self._encoding = encoding
        self._blocks: dict[int, tuple[Block, int]] = {}  # id -> (the block, kept alive; count)
        self._tools = _ToolTally()
        self._tool_changes = 0  # how much of the state's ``tool_changes`` was tallied
        self._tools_of: SessionState | None = None  # the state they were tallied from
        self._shares = _Shares()

    def _use(self, encoding: Encoding) -> None:
        if encoding.name != self._encoding:
            self._forget(encoding.name)  # counts in another encoding mean nothing

    def count(self, blocks: Sequence[Block], encoding: Encoding) -> list[int]:
        """Each block's tokens (images: a flat estimate), counting only blocks not seen."""
        self._use(encoding)
        known = self._blocks
        fresh = [b for b in blocks if id(b) not in known and b.kind != "image"]
        if fresh:
            texts = [b.content() for b in fresh]
            counts = counter_for(texts, encoding).count_batch(texts)
            for block, tokens in zip(fresh, counts, strict=True):
                known[id(block)] = (block, tokens)
        return [IMAGE_TOKENS if b.kind == "image" else known[id(b)][1] for b in blocks]

    def remember(self, block: Block, tokens: int, encoding: Encoding) -> None:
        """``block``'s count, known without counting it (the same text counted in another
        state: a fork's unchanged blocks take their session's counts)."""
        self._use(encoding)
        self._blocks[id(block)] = (block, tokens)

    def tokens(self, block: Block, encoding: Encoding) -> int:
        return self.count([block], encoding)[0]

    def counted(self, block: Block) -> int:
        """A block's tokens as already counted (0: not counted yet), without counting."""
        if block.kind == "image":
            return IMAGE_TOKENS
        known = self._blocks.get(id(block))
        return known[1] if known is not None else 0

    def message_sizes(self, messages: Sequence[Message], encoding: Encoding) -> list[int]:
        """Each message's tokens (the sum of its blocks'), counted in one batch."""
        counts = iter(self.count([b for m in messages for b in m.blocks], encoding))
        return [sum(next(counts) for _ in message.blocks) for message in messages]

    def messages(self, messages: Sequence[Message], encoding: Encoding) -> int:
        """Tokenizer estimate of messages' content (no per-message framing: an estimate)."""
        return sum(self.count([b for m in messages for b in m.blocks], encoding))

    def categories(self, state: SessionState, encoding: Encoding) -> tuple[CategoryTotal, ...]:
        """The context's tokens and blocks by kind of content, in ``BREAKDOWN_ORDER``."""
        self._use(encoding)
        shares = self._shares
        dropped = shares.gone(state.context)
        new = state.context[len(shares.messages) :]
        still = {id(message) for message in new}  # the last message is taken again
        for message in dropped:
            if id(message) not in still:
                for block in message.blocks:
                    self._blocks.pop(id(block), None)
        counts = iter(self.count([b for m in new for b in m.blocks], encoding))
        for message in new:
            shares.add(message, [next(counts) for _ in message.blocks])
        return tuple(
            CategoryTotal(name, shares.tokens[name], shares.blocks[name])
            for name in BREAKDOWN_ORDER
            if shares.blocks[name] > 0
        )

    def tools(self, state: SessionState, encoding: Encoding) -> tuple[ToolTotal, ...]:
        """Calls and result tokens per tool name, most result tokens first (see ``_ToolTally``:
        the newest ``RESULT_BUDGET`` characters of results counted, older ones estimated); only
        calls added or given a new result since the last look are tallied again."""
        self._use(encoding)
        changes = state.tool_changes
        if state is not self._tools_of or self._tool_changes < changes.base:
            # Another state (a reader that read its file again from the start), or changes
            # dropped since the last look (their calls are in the archive's sums): tally anew.
            self._tools, self._tool_changes, self._tools_of = _ToolTally(), changes.base, state
        new = changes.since(self._tool_changes)
        self._tool_changes = changes.end
        return self._tools.update(new, encoding, state.tools.archived.totals)

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
from collections.abc import Sequence
from dataclasses import dataclass

from engine.models.registry import lookup
from engine.sessions.model import Block, Message, SessionState, ToolCall
from engine.tokens import get_encoding
from engine.tokens.cache import CachedCounter, default_disk_cache
from engine.tokens.encoding import Encoding

DEFAULT_ENCODING = "o200k_base"

# Claude Code's own estimate for an image or document block (agent-log-formats.md §1.6).
IMAGE_TOKENS = 2000
# From this many texts on, counts go through the on-disk cache; a live append's one or two
# texts are counted directly (a disk write per append would cost more than it saves).
BULK = 32

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


class Ledger:
    """Token counts for one session (its sub-agents' blocks too), in one encoding at a time."""

    def __init__(self) -> None:
        self._forget(None)

    def _forget(self, encoding: str | None) -> None:
        self._encoding = encoding
        self._blocks: dict[int, tuple[Block, int]] = {}  # id -> (the block, kept alive; count)
        self._results: dict[int, tuple[ToolCall, str, int]] = {}  # id -> (call, text, count)
        self._tallied: dict[int, tuple[str, int, bool]] = {}  # what each call added to _tally
        self._tally: dict[str, list[int]] = {}  # name -> [calls, result tokens, persisted]
        self._tool_changes = 0  # how much of the state's ``tool_changes`` was tallied
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
            counter = cached(encoding) if len(fresh) >= BULK else encoding
            for block, tokens in zip(
                fresh, counter.count_batch([b.content() for b in fresh]), strict=True
            ):
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
        """Calls and result tokens per tool name, most result tokens first; only calls added
        or given a new result since the last look are counted and tallied again."""
        self._use(encoding)
        changes = state.tool_changes[self._tool_changes :]
        self._tool_changes = len(state.tool_changes)
        updates = list({id(call): call for call in changes}.values())
        self._count_results(updates, encoding)
        tally = self._tally
        for call in updates:
            before = self._tallied.get(id(call))
            if before is not None:
                entry = tally[before[0]]
                entry[0] -= 1
                entry[1] -= before[1]
                entry[2] -= before[2]
            now = (call.name, self.result_tokens(call), call.persisted_to is not None)
            entry = tally.setdefault(call.name, [0, 0, 0])
            entry[0] += 1
            entry[1] += now[1]
            entry[2] += now[2]
            self._tallied[id(call)] = now
        rows = [ToolTotal(name, *entry) for name, entry in tally.items() if entry[0]]
        return tuple(sorted(rows, key=lambda row: (-row.result_tokens, row.name)))

    def _count_results(self, calls: Sequence[ToolCall], encoding: Encoding) -> None:
        pending = [
            call
            for call in calls
            if call.result_text is not None
            and self._results.get(id(call), (None, None, 0))[1] is not call.result_text
        ]
        if pending:
            counter = cached(encoding) if len(pending) >= BULK else encoding
            counts = counter.count_batch([call.result_text or "" for call in pending])
            for call, tokens in zip(pending, counts, strict=True):
                self._results[id(call)] = (call, call.result_text or "", tokens)

    def result_tokens(self, call: ToolCall) -> int:
        """The tokens of a call's result as last counted by ``tools`` (0: none yet)."""
        known = self._results.get(id(call))
        return known[2] if known is not None else 0

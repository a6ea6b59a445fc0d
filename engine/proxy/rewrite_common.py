"""What the request rewriters of every protocol share: the conversation as a list of entries
(a message, or a Responses item) with the call ids they hold, where a compaction cuts it, and the
checks that a rewrite keeps every tool call paired with its result.

A rewrite never changes the turn in progress: the entries after the model's last message (the
results or the prompt being sent now) stay as the agent sent them, and a compaction keeps the
last entry whatever its plan says. When a request does not match the plan (a side request such
as a title, a sub-agent's conversation, a session that moved on past a later compaction), the
rewriter leaves it alone: None, the agent's own bytes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ctxtop.engine.proxy.live_plan import CompactCut, round_digest

EMPTY_ROUND = round_digest([], [])  # a response with no text and no call (thinking only)


@dataclass(slots=True)
class Entry:
    """One entry of a request's conversation, as the rewriters see it."""

    role: str  # "assistant" (a model message or call), "user", "tool" (results), "standing"
    calls: set[str] = field(default_factory=set)  # call ids of tool calls it makes
    results: set[str] = field(default_factory=set)  # call ids of tool results it carries
    typed: bool = False  # text the user typed (a request), not only results or injected text
    said: str = ""  # the model's text (an assistant entry's text parts, joined)

    @property
    def ids(self) -> set[str]:
        return self.calls | self.results


def tail_start(entries: Sequence[Entry]) -> int:
    """Index of the round in progress: the model's last message (its thinking, its calls) and
    what follows it (the results or the prompt being sent now), at least the last entry.
    Nothing from here is changed."""
    return round_in_progress([e.role == "assistant" for e in entries])


def round_in_progress(is_model: Sequence[bool]) -> int:
    """``tail_start`` from whether each entry is the model's (cheap: an edit needs no more)."""
    start = max((i for i, model in enumerate(is_model) if model), default=-1)
    while start > 0 and is_model[start - 1]:
        start -= 1  # one response may be several entries (reasoning, text, calls)
    return min(start, len(is_model) - 1) if start >= 0 else max(len(is_model) - 1, 0)


def model_runs(entries: Sequence[Entry]) -> list[tuple[int, int]]:
    """(start, end) of each run of model entries: one model response each (one message, or
    the Responses API's reasoning, text and call items of one response)."""
    runs: list[tuple[int, int]] = []
    for index, entry in enumerate(entries):
        if entry.role != "assistant":
            continue
        if runs and runs[-1][1] == index:
            runs[-1] = (runs[-1][0], index + 1)
        else:
            runs.append((index, index + 1))
    return runs


def _run_digest(entries: Sequence[Entry]) -> str:
    return round_digest([e.said for e in entries], [c for e in entries for c in e.calls])


@dataclass(frozen=True, slots=True)
class Boundary:
    keep_from: int  # the first entry kept verbatim
    request: int | None  # the kept request of the turn the cut fell in (before keep_from)


def holds_history(entries: Sequence[Entry], cut: CompactCut) -> int | None:
    """The index after the summarised rounds when the request's first model responses are the
    plan's summarised rounds, by their content (the model's text and call ids, in order); else
    None: a sub-agent's conversation, the agent's own after it compacted by itself, a side
    request. A plan whose rounds hold nothing to recognise them by applies to nothing."""
    digests = cut.summarised_digests
    runs = model_runs(entries)
    if not digests or len(runs) <= len(digests) or all(d == EMPTY_ROUND for d in digests):
        return None
    for (start, end), expected in zip(runs, digests, strict=False):
        if _run_digest(entries[start:end]) != expected:
            return None
    return runs[len(digests) - 1][1]


def compaction_boundary(entries: Sequence[Entry], cut: CompactCut) -> Boundary | None:
    """Where the summary's rounds end in this request (after the last summarised response and
    the results of its calls), or None when the request does not hold them as the plan says
    (then nothing is replaced)."""
    end = holds_history(entries, cut)
    if end is None:
        return None
    summarised, kept = set(cut.summarised_calls), set(cut.kept_calls)
    last = max((i for i, e in enumerate(entries) if e.ids & summarised), default=-1)
    keep_from = max(end, last + 1)
    if keep_from > tail_start(entries) or keep_from >= len(entries):
        return None  # the summarised part reaches the round in progress
    before, after = entries[:keep_from], entries[keep_from:]
    if any(e.ids & kept for e in before) or any(e.ids & summarised for e in after):
        return None  # the rounds are not where the plan saw them
    if kept and not any(e.ids & kept for e in after):
        return None
    request = None
    if cut.kept_request:
        request = max((i for i in range(keep_from) if entries[i].typed), default=None)
        if request is None:
            return None
    return Boundary(keep_from, request)


def pairs_intact(entries: Sequence[Entry]) -> bool:
    """Every result follows its call, and every call has its result (but those of the model's
    last message when the request ends with it)."""
    seen: set[str] = set()
    answered: set[str] = set()
    for entry in entries:
        if not entry.results <= seen:
            return False
        answered |= entry.results
        seen |= entry.calls
    open_calls = seen - answered
    last_run = len(entries)
    while last_run > 0 and entries[last_run - 1].role == "assistant":
        last_run -= 1
    pending = {c for e in entries[last_run:] for c in e.calls}
    return open_calls <= pending


# msgspec decodes and encodes a request in a fraction of the stdlib's time (bench/live_rewrite.py)
_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode


def decode(body: bytes) -> Any:
    """The request's JSON, or None if it is not JSON."""
    try:
        return _decode(body)
    except (msgspec.DecodeError, ValueError, RecursionError):
        pass
    try:  # what msgspec refuses and the stdlib reads (a lone escaped surrogate, a huge number)
        return json.loads(body)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def encode(body: Any) -> bytes:
    """The rewritten body as compact JSON (as the agents send theirs); the same bytes for the
    same body every time, so the prompt cache warms again after one write."""
    try:
        return _encode(body)
    except (msgspec.EncodeError, UnicodeEncodeError, OverflowError):
        # a lone surrogate the agent escaped: keep it escaped
        return json.dumps(body, separators=(",", ":")).encode("ascii")

"""The conversation as compaction sees it: items in context order, grouped into rounds.

Each format's source (engine/compaction/sources/) turns the agent's records into ``Item``s; the
cut (``choose_cut``) then decides what is summarised and what is kept, the same way for every
format. A round is one user request and everything that answered it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from engine.errors import CtxtopError

# request: a user turn (starts a round); message: any other conversational message;
# tool_result: a message carrying tool results; standing: the system prompt, project rules,
# memory files (always kept); summary: an earlier compaction summary; meta: injected text that
# is not the user's (command output, reminders); attachment: a file or buffer shown to the model;
# overflow: the agent's "context too long" error.
ItemKind = Literal[
    "request", "message", "tool_result", "standing", "summary", "meta", "attachment", "overflow"
]


@dataclass(slots=True)
class Call:
    """One tool call and (once seen) its result."""

    call_id: str
    name: str
    input: Any  # a JSON object, or the arguments text
    result: str | None = None
    is_error: bool = False


@dataclass(slots=True)
class Item:
    """One message of the context. ``key`` locates its raw record(s) for the format's writer."""

    key: Any
    role: str
    kind: ItemKind
    text: str = ""
    calls: list[Call] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # attached files / buffers, by name
    images: int = 0  # image parts


@dataclass(slots=True)
class Round:
    number: int  # 1-based, in the part after the previous summary
    items: list[Item]

    @property
    def request(self) -> str:
        return self.items[0].text if self.items else ""


@dataclass(slots=True)
class Cut:
    """What happens to each item: kept as is, summarised (and dropped), or kept as standing."""

    standing: list[Item]
    previous_summary: Item | None
    summarised: list[Item]
    summarised_rounds: list[Round]
    kept: list[Item]
    kept_rounds: list[Round]
    overflowed_round: int | None  # a round that overflowed: never summarised, kept

    @property
    def rounds(self) -> int:
        return len(self.summarised_rounds) + len(self.kept_rounds)


def rounds_of(items: list[Item]) -> tuple[list[Item], list[Round]]:
    """(the items before the first request, the rounds)."""
    lead: list[Item] = []
    rounds: list[Round] = []
    for item in items:
        if item.kind == "request":
            rounds.append(Round(len(rounds) + 1, [item]))
        elif rounds:
            rounds[-1].items.append(item)
        else:
            lead.append(item)
    return lead, rounds


def choose_cut(items: list[Item], keep_rounds: int = 1, before: int | None = None) -> Cut:
    """Split the context: the last ``keep_rounds`` rounds (or the rounds from ``before`` on) stay
    verbatim; a last round that overflowed stays too (without its error); the rest back to the
    previous summary is summarised; standing items (system prompt, rules, memory) are kept."""
    if keep_rounds < 0:
        raise CtxtopError(f"--keep-rounds must be 0 or more, not {keep_rounds}")
    last_summary = max((i for i, item in enumerate(items) if item.kind == "summary"), default=-1)
    previous = items[last_summary] if last_summary >= 0 else None
    standing = [item for item in items if item.kind == "standing"]
    # What the previous compaction kept beside its summary (Codex keeps the user's messages) is
    # summarised again with it; the rounds are counted after the summary.
    carried = [item for item in items[: max(last_summary, 0)] if item.kind != "standing"]
    after = [item for item in items[last_summary + 1 :] if item.kind != "standing"]
    lead, rounds = rounds_of(after)
    overflowed = None
    if rounds and any(item.kind == "overflow" for item in rounds[-1].items):
        overflowed = rounds[-1].number
    if before is not None:
        if not 2 <= before <= len(rounds) + 1:
            raise CtxtopError(
                f"--before must be a round from 2 to {len(rounds) + 1} "
                f"(the session has {len(rounds)} rounds since the last summary), not {before}"
            )
        first_kept = before - 1
    else:
        first_kept = max(len(rounds) - keep_rounds, 0)
    if overflowed is not None:
        first_kept = min(first_kept, overflowed - 1)
    summarised_rounds, kept_rounds = rounds[:first_kept], rounds[first_kept:]
    summarised = carried + lead + [item for r in summarised_rounds for item in r.items]
    if not summarised_rounds and not any(item.kind != "meta" for item in carried + lead):
        raise CtxtopError(
            f"nothing to compact: {len(rounds)} rounds since the last summary, "
            f"and {len(kept_rounds)} of them are kept (lower --keep-rounds)"
        )
    kept = [item for r in kept_rounds for item in r.items if item.kind != "overflow"]
    return Cut(standing, previous, summarised, summarised_rounds, kept, kept_rounds, overflowed)

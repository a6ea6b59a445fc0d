"""The conversation as compaction sees it: items in context order, grouped into turns and rounds.

Each agent's compaction source (engine/agents/<agent>/source.py) turns its records into
``Item``s; the cut (``choose_cut``) then decides what is summarised and what is kept, the same
way for every format. A *turn* is one user request and everything that answered it; a *round*
is one model response and the tool calls and results it produced. The cut counts rounds, so it
can fall inside one long agentic turn (the commonest case: one prompt answered by dozens of tool
calls).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.words import plural

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
    # The model response an assistant item belongs to, where the log says (Claude Code writes one
    # line per content block, all with the response's message id); None: not known.
    response: str | None = None


@dataclass(slots=True)
class Round:
    """One model response, and the tool results (and injected lines) that followed it."""

    number: int  # 1-based, counted across turns in the part after the previous summary
    turn: int  # the turn it belongs to (0: before the first user request)
    items: list[Item]

    @property
    def calls(self) -> list[Call]:
        return [call for item in self.items for call in item.calls]

    @property
    def finished(self) -> bool:
        """Every call of the round has its result written."""
        return all(call.result is not None for call in self.calls)

    @property
    def overflowed(self) -> bool:
        return any(item.kind == "overflow" for item in self.items)


@dataclass(slots=True)
class Turn:
    """A user request (``lead`` starts with it, then what came before the first response) and
    its rounds. Turn 0 holds what precedes the first request after the previous summary."""

    number: int
    lead: list[Item]
    rounds: list[Round]

    @property
    def request(self) -> Item | None:
        return self.lead[0] if self.lead and self.lead[0].kind == "request" else None


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
    turns: list[Turn] = field(default_factory=list)
    # The cut fell inside this turn: its request is kept verbatim before the kept rounds.
    kept_request: Turn | None = None

    @property
    def rounds(self) -> int:
        return len(self.summarised_rounds) + len(self.kept_rounds)

    @property
    def turn_count(self) -> int:
        """User turns since the previous summary (turn 0, the lead-in, is not one)."""
        return sum(1 for turn in self.turns if turn.request is not None)


def _starts_round(item: Item, current: Round | None) -> bool:
    """Whether an assistant item begins a new model response."""
    if current is None:
        return True
    first = next((i for i in current.items if i.role == "assistant"), None)
    if item.response is not None and first is not None and first.response is not None:
        return item.response != first.response
    # Without response ids: a response's parts are contiguous; one after results is a new one.
    return current.items[-1].role != "assistant"


def turns_of(items: list[Item]) -> list[Turn]:
    """The items as turns of rounds (turn 0 first, possibly empty)."""
    turns = [Turn(0, [], [])]
    count = 0
    for item in items:
        turn = turns[-1]
        if item.kind == "request":
            turns.append(Turn(len(turns), [item], []))
        elif item.role == "assistant" and _starts_round(
            item, turn.rounds[-1] if turn.rounds else None
        ):
            count += 1
            turn.rounds.append(Round(count, turn.number, [item]))
        elif turn.rounds:
            turn.rounds[-1].items.append(item)
        else:
            turn.lead.append(item)
    return turns


def _all_kept(rounds: int) -> str:
    if rounds == 0:
        return "no rounds since the last summary"
    if rounds == 1:
        return "1 round since the last summary, and it is kept verbatim"
    return f"{rounds} rounds since the last summary, all kept verbatim (keep fewer rounds)"


def _first_kept(rounds: list[Round], keep_rounds: int, before: int | None) -> int:
    """Index of the first round kept verbatim."""
    if before is not None:
        if not 2 <= before <= len(rounds) + 1:
            raise CtxtopError(
                f"--before must be a round from 2 to {len(rounds) + 1} "
                f"(the session has {plural(len(rounds), 'round')} since the last summary), "
                f"not {before}"
            )
        first = before - 1
    else:
        first = max(len(rounds) - keep_rounds, 0)
    if rounds and not rounds[-1].finished:
        first = min(first, len(rounds) - 1)  # a round still waiting for results stays whole
    return first


def _overflow_index(rounds: list[Round]) -> int | None:
    """Index of the round to keep because the request after it overflowed the window: the
    last round, if it holds the overflow error, and the round before it in the same turn."""
    if not rounds or not rounds[-1].overflowed:
        return None
    last = rounds[-1]
    if len(rounds) > 1 and rounds[-2].turn == last.turn:
        return len(rounds) - 2
    return len(rounds) - 1


def choose_cut(items: list[Item], keep_rounds: int = 3, before: int | None = None) -> Cut:
    """Split the context: the last ``keep_rounds`` rounds (or the rounds from ``before`` on) stay
    verbatim, with the request of the turn they are in; a last round that overflowed stays too
    (without its error), with the round whose results overflowed; a round still waiting for
    results stays; the rest back to the previous summary is summarised; standing items (system
    prompt, rules, memory) are kept."""
    if keep_rounds < 0:
        raise CtxtopError(f"--keep-rounds must be 0 or more, not {keep_rounds}")
    last_summary = max((i for i, item in enumerate(items) if item.kind == "summary"), default=-1)
    previous = items[last_summary] if last_summary >= 0 else None
    standing = [item for item in items if item.kind == "standing"]
    # What the previous compaction kept beside its summary (Codex keeps the user's messages) is
    # summarised again with it; the rounds are counted after the summary.
    carried = [item for item in items[: max(last_summary, 0)] if item.kind != "standing"]
    after = [item for item in items[last_summary + 1 :] if item.kind != "standing"]
    turns = turns_of(after)
    rounds = [r for turn in turns for r in turn.rounds]
    first_kept = _first_kept(rounds, keep_rounds, before)
    overflow = _overflow_index(rounds)
    if overflow is not None:
        first_kept = min(first_kept, overflow)
    summarised_rounds, kept_rounds = rounds[:first_kept], rounds[first_kept:]
    last_summarised_turn = summarised_rounds[-1].turn if summarised_rounds else -1
    summarised = carried + turns[0].lead
    kept: list[Item] = []
    kept_request: Turn | None = None
    for turn in turns:
        gone = [r for r in turn.rounds if r.number <= first_kept]
        stays = [r for r in turn.rounds if r.number > first_kept]
        lead = turn.lead if turn.number else []
        # A turn with no response yet goes with the side of the cut it stands on.
        unanswered_before = not turn.rounds and turn.number <= last_summarised_turn
        if gone or unanswered_before:
            summarised += lead + [item for r in gone for item in r.items]
        if stays or (not turn.rounds and not unanswered_before):
            kept += lead + [item for r in stays for item in r.items]
            if gone and turn.request is not None:
                kept_request = turn
    if not summarised_rounds and not any(item.kind != "meta" for item in carried + turns[0].lead):
        raise CtxtopError(f"nothing to compact: {_all_kept(len(rounds))}")
    kept = [item for item in kept if item.kind != "overflow"]
    overflowed = rounds[-1].number if overflow is not None else None
    return Cut(
        standing,
        previous,
        summarised,
        summarised_rounds,
        kept,
        kept_rounds,
        overflowed,
        turns,
        kept_request,
    )

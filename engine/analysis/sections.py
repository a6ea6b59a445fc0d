"""Sorting the context into a profile's sections, and each section's share of the budget.

Each message of the context is one content kind (``content_kind``); where a profile splits the
conversation (history / current user message / current tool-call rounds) the split is at the
newest message the user typed. Budgets follow prompt-tsx's flex rules at the top level
(``allocate``): siblings without flexGrow first, then by flexGrow from high to low, each group
splitting what is left by flexBasis after the later groups' flexReserve is set aside, a TokenLimit
capping its section; every section then takes what it uses out of what is left.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.analysis.profiles import SectionSpec
from engine.sessions.model import Message

CONVERSATION = "conversation"


def content_kind(message: Message) -> str:
    """instructions | attachments | conversation (what the model sees of the log)."""
    if message.kind == "instructions" or message.role in ("system", "developer"):
        return "instructions"
    if message.kind == "attachment":
        return "attachments"
    return CONVERSATION


def is_typed_user_message(message: Message) -> bool:
    """A message the user wrote (not a tool result, attachment or injected instructions)."""
    return (
        message.role == "user"
        and message.kind in ("message", "compact_summary")
        and any(block.kind == "text" for block in message.blocks)
        and not any(block.kind == "tool_result" for block in message.blocks)
    )


def last_user_index(context: Sequence[Message]) -> int | None:
    for index in range(len(context) - 1, -1, -1):
        if is_typed_user_message(context[index]):
            return index
    return None


def section_of(kind: str, index: int, user_index: int | None, contents: frozenset[str]) -> str:
    """The content name (a profile's ``content``) of a message of this kind at ``index``."""
    if kind != CONVERSATION:
        return kind
    if "messages" in contents:
        return "messages"
    if user_index is None or index < user_index:
        return "history"
    return "current_user" if index == user_index else "current_rounds"


@dataclass(frozen=True, slots=True)
class Allocation:
    budget: int
    used: int


def allocate(specs: Sequence[SectionSpec], used: Sequence[int], budget: int) -> list[Allocation]:
    """Each section's budget under prompt-tsx's flex rules, and what it then uses of it."""
    infinity = float("inf")
    keys = sorted({infinity if s.flex_grow is None else s.flex_grow for s in specs}, reverse=True)
    groups = [
        [
            i
            for i, s in enumerate(specs)
            if (infinity if s.flex_grow is None else s.flex_grow) == key
        ]
        for key in keys
    ]
    budgets = [0] * len(specs)
    remaining = budget
    for position, group in enumerate(groups):
        later = [i for g in groups[position + 1 :] for i in g]
        reserved = sum(specs[i].reserve(remaining) for i in later)
        available = max(remaining - reserved, 0)
        basis_sum = sum(specs[i].flex_basis for i in group)
        constant = 0
        capped: set[int] = set()
        for i in group:
            limit = specs[i].limit(budget)
            if limit is not None and available * specs[i].flex_basis / basis_sum >= limit:
                basis_sum -= specs[i].flex_basis
                constant += limit
                capped.add(i)
        for i in group:
            if i in capped:
                budgets[i] = specs[i].limit(budget) or 0
            else:
                share = (available - constant) * specs[i].flex_basis / basis_sum if basis_sum else 0
                budgets[i] = max(int(share), 0)
        for i in group:
            remaining -= min(used[i], budgets[i])
    return [Allocation(budgets[i], used[i]) for i in range(len(specs))]

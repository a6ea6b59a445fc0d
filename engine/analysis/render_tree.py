"""The profile's prompt tree for the current context, rendered by the prompt renderer
(engine/render) to the budget: its per-element budgets, what it prunes and why, and the nodes a
smaller budget would prune.

Each message becomes a message element whose text is as many words as the message has tokens
(rendered with the renderer's ``words`` tokenizer), so the renderer sizes every element by
ctxtop's token counts without tokenizing the session a second time; the renderer adds its own
3 tokens of framing per message. Tool results in a section with ``truncate_results`` are cut to
the profile's limit first. This is the only layout of the prompt: the dashboard and ``ctxtop
report`` both show it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxtop.engine.analysis.profiles import Profile, SectionSpec
from ctxtop.engine.analysis.sections import is_typed_user_message
from ctxtop.engine.analysis.snapshot import PromptNode, Pruned, RenderedElement
from ctxtop.engine.render.element_report import ElementRow, build_report
from ctxtop.engine.render.elements import (
    MAX_PRIORITY,
    Child,
    Element,
    assistant,
    elem,
    prioritized_list,
    system,
    user,
)
from ctxtop.engine.render.elements import token_limit as limit_element
from ctxtop.engine.render.elements import tool as tool_element
from ctxtop.engine.render.materialized import Container, Counting, Node
from ctxtop.engine.render.materialized import Message as RenderedMessage
from ctxtop.engine.render.renderer import RenderResult, render
from ctxtop.engine.render.tokenizers import get_tokenizer
from ctxtop.engine.sessions.model import Message

# The order the parts have in the prompt (prompt-tsx keeps the order it is given).
PROMPT_ORDER = (
    "system",
    "instructions",
    "attachments",
    "history",
    "messages",
    "current_user",
    "current_rounds",
)
RENDERER = "engine/render (exact mode, words sized by ctxtop's counts)"
# Copilot's marker between the kept head and tail of a cut tool result (approximate size).
TRUNCATION_MARKER_TOKENS = 12


def truncated(tokens: int, limit: int) -> int:
    """A tool result cut to ``limit`` tokens (head and tail kept around a marker)."""
    return tokens if tokens <= limit else limit + TRUNCATION_MARKER_TOKENS


@dataclass(frozen=True, slots=True)
class Unit:
    """What the renderer removes in one piece when the budget is short: a message of a section
    with a priority, or a history round (element ``id``)."""

    id: str
    section: str
    tokens: int  # ctxtop's count, after any truncation
    rank: tuple[float, float, int]  # the renderer's order: section's priority, own, position
    priority: int


@dataclass(slots=True)
class PromptTree:
    """The tree to render and its prunable units, in prompt order. ``prunes``: whether the
    profile lets the renderer prune (a section with a priority or a TokenLimit); an agent that
    compacts instead is only laid out. ``key`` is the same for two trees that render alike."""

    children: list[Child]
    prunes: bool
    units: list[Unit] = field(default_factory=list)
    key: list[object] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Rendered:
    budgets: dict[str, int]  # element id -> the budget the renderer gave it
    tokens_before: dict[str, int]  # element id -> its tokens before pruning (framing included)
    pruned: tuple[Pruned, ...]
    elements: tuple[RenderedElement, ...]  # sections and history rounds (not every message)
    token_count: int | None
    error: str | None


def _words(count: int) -> str:
    return " ".join(["w"] * count) if count > 0 else ""


def _flex(spec: SectionSpec, budget: int) -> dict[str, Any]:
    props: dict[str, Any] = {"id": spec.name}
    if spec.flex_grow is not None:
        props["flex_grow"] = spec.flex_grow
    if spec.flex_basis != 1:
        props["flex_basis"] = spec.flex_basis
    if spec.flex_reserve is not None:
        props["flex_reserve"] = spec.reserve(budget)
    if spec.priority is not None:
        props["priority"] = spec.priority
    return props


MessageKey = tuple[str, str, int, str | None]  # element id, role, size, tool call id


def _message_key(message: Message, size: int, element_id: str) -> MessageKey:
    call = None
    if message.role == "tool":
        call = next((b.tool_call_id for b in message.blocks if b.tool_call_id), None)
        call = call or message.id
    return (element_id, message.role, size, call)


def _message(key: MessageKey) -> Element:
    element_id, role, size, call = key
    text = _words(size)
    if role == "assistant":
        return assistant(text, id=element_id)
    if call is not None:
        return tool_element(text, tool_call_id=call, id=element_id)
    if role in ("system", "developer"):
        return system(text, id=element_id)
    return user(text, id=element_id)


class ElementCache:
    """Message elements kept from one tree to the next (a live session's tree changes at its
    end): the renderer never changes an element, so an unchanged message reuses its own."""

    def __init__(self) -> None:
        self._kept: dict[MessageKey, Element] = {}
        self._fresh: dict[MessageKey, Element] = {}

    def element(self, key: MessageKey) -> Element:
        found = self._kept.get(key) or self._fresh.get(key)
        if found is None:
            found = _message(key)
        self._fresh[key] = found
        return found

    def done(self) -> None:
        """Keep only what the last tree used."""
        self._kept, self._fresh = self._fresh, {}


def _unique(base: str, used: set[str]) -> str:
    """Element ids must be unique; a log may hold two messages under one id."""
    candidate, number = base, 1
    while candidate in used:
        number += 1
        candidate = f"{base}#{number}"
    used.add(candidate)
    return candidate


def _size(spec: SectionSpec, message: Message, tokens: int, budget: int) -> int:
    cut = spec.truncate_results
    if cut is not None and any(b.kind == "tool_result" for b in message.blocks):
        return truncated(tokens, int(budget * cut.max_fraction))
    return tokens


@dataclass(slots=True)
class _Members:
    """The context's messages sorted into the profile's sections (history: by round)."""

    elements: dict[str, list[Element]]
    sizes: dict[str, list[int]]  # the same, their sizes
    rounds: list[list[tuple[Element, int]]]
    order: list[tuple[str, int, MessageKey]]  # each message's section, round and element


def _members(
    profile: Profile,
    context: Sequence[Message],
    names: Sequence[str],
    tokens: Sequence[int],
    budget: int,
    cache: ElementCache,
) -> _Members:
    specs = {spec.content: spec for spec in profile.sections}
    found = _Members({name: [] for name in specs}, {name: [] for name in specs}, [], [])
    used: set[str] = {spec.name for spec in profile.sections}
    for index, name in enumerate(names):
        spec = specs.get(name)
        if spec is None:  # a user's profile without a section for it: not in its prompt
            continue
        message = context[index]
        size = _size(spec, message, tokens[index], budget)
        key = _message_key(message, size, _unique(f"m:{message.id}", used))
        element = cache.element(key)
        if spec.prioritized_list:
            if not found.rounds or is_typed_user_message(message):
                found.rounds.append([])
            found.rounds[-1].append((element, size))
        else:
            found.elements[name].append(element)
            found.sizes[name].append(size)
        found.order.append((name, len(found.rounds), key))
    return found


def build_tree(
    profile: Profile,
    context: Sequence[Message],
    names: Sequence[str],
    tokens: Sequence[int],
    budget: int,
    system_tokens: int,
    cache: ElementCache | None = None,
) -> PromptTree:
    """``names``: each message's content name (a section of the profile holds it)."""
    specs = {spec.content: spec for spec in profile.sections}
    cache = cache or ElementCache()
    members = _members(profile, context, names, tokens, budget, cache)
    cache.done()
    prunes = any(s.priority is not None or s.token_limit is not None for s in profile.sections)
    # The tree is a function of these (a round starts at a typed user message: its key).
    tree = PromptTree([], prunes, key=[profile.sections, budget, system_tokens, members.order])
    for content in PROMPT_ORDER:
        spec = specs.get(content)
        if spec is None:
            continue
        props = _flex(spec, budget)
        section: Element
        if content == "system":
            section = system(_words(system_tokens), **props)
        elif spec.prioritized_list:
            section = prioritized_list(
                *(
                    elem(*(element for element, _ in items), id=f"{spec.name}/round-{number + 1}")
                    for number, items in enumerate(members.rounds)
                ),
                **props,
            )
        else:
            section = elem(*members.elements[content], **props)
        _add_units(tree, spec, members, content)
        limit = spec.limit(budget)
        if limit is not None:
            inner_id = props.pop("id")
            section.id = f"{inner_id}/content"
            section.flex_grow = section.flex_basis = None
            section.flex_reserve = None
            section = limit_element(section, max=limit, **props, id=inner_id)
        tree.children.append(section)
    return tree


def _add_units(tree: PromptTree, spec: SectionSpec, members: _Members, content: str) -> None:
    """The pieces the renderer prunes whole from a section with a priority: its messages, or
    (a PrioritizedList) its rounds, ranked as the renderer's PrioritizedList ranks them (the
    older, the lower)."""
    if spec.priority is None:
        return
    base = float(spec.priority)
    if spec.prioritized_list:
        count = len(members.rounds)
        for number, items in enumerate(members.rounds):
            own = spec.priority - count + number
            unit_id = f"{spec.name}/round-{number + 1}"
            size = sum(size for _, size in items)
            tree.units.append(Unit(unit_id, spec.name, size, (base, own, len(tree.units)), own))
        return
    for element, size in zip(members.elements[content], members.sizes[content], strict=True):
        assert element.id is not None
        rank = (base, float(MAX_PRIORITY), len(tree.units))
        tree.units.append(Unit(element.id, spec.name, size, rank, spec.priority))


def render_tree(tree: PromptTree, budget: int) -> Rendered:
    result = render(
        tree.children, budget=budget, tokenizer="words", mode="exact", prune=tree.prunes
    )
    units = {unit.id for unit in tree.units}
    rows = _fitted_rows(result, units) if _untouched(result) else build_report(result).elements
    error = result.error
    return Rendered(
        budgets={key: int(value) for key, value in result.budgets.items()},
        tokens_before={row.id: int(row.tokens_before) for row in rows},
        pruned=_pruned(rows),
        elements=tuple(
            RenderedElement(
                id=row.id,
                budget=None if row.budget is None else int(row.budget),
                tokens_before=int(row.tokens_before),
                tokens=int(row.tokens),
                pruned=row.pruned,
                reason=row.reason,
            )
            for row in rows
            if not row.id.startswith(("m:", "#"))
        ),
        token_count=None if result.token_count is None else int(result.token_count),
        error=None if error is None else f"{error.type}: {error.message}",
    )


def _untouched(result: RenderResult) -> bool:
    """Rendered whole: nothing pruned or grown, so the final tree is the whole tree (also
    when a tree laid out without pruning is over the budget)."""
    return result.final_tree is not None and not result.removals and not result.expandable_calls


def _fitted_rows(result: RenderResult, units: set[str]) -> list[ElementRow]:
    """The render report's rows of a tree rendered whole, from the counts the render kept on
    its final tree (the full report walks and counts every part of every message again): the
    sections, rounds and the messages among ``units`` (a section may be one message: system)."""
    counting = Counting(get_tokenizer(result.tokenizer), result.mode == "exact")
    rows: list[ElementRow] = []
    stack: list[tuple[Node, int]] = [(result.final_tree, -1)] if result.final_tree else []
    while stack:
        node, depth = stack.pop()
        element_id = node.json_id
        if element_id is not None and (
            isinstance(node, Container)
            or (
                isinstance(node, RenderedMessage)
                and (element_id in units or not element_id.startswith("m:"))
            )
        ):
            assert isinstance(node, Container | RenderedMessage)
            tokens = node.token_count(counting)
            budget, consumed = result.budgets.get(element_id), result.consumed.get(element_id)
            kind = node.name or "" if isinstance(node, Container) else "message"
            rows.append(
                ElementRow(element_id, kind, depth, budget, consumed, tokens, tokens, False, None)
            )
        if isinstance(node, Container):  # a message's parts have no rows here
            step = 1 if node.json_id is not None else 0
            stack.extend((child, depth + step) for child in reversed(node.children))
    return rows


def _pruned(rows: Sequence[ElementRow]) -> tuple[Pruned, ...]:
    """The outermost pruned elements (what went with them is not listed again): a container
    the renderer emptied says why its contents went."""
    found: list[Pruned] = []
    inside: int | None = None  # the depth of the pruned element being walked through
    for number, row in enumerate(rows):
        if inside is not None and row.depth > inside:
            continue
        inside = None
        if not row.pruned:
            continue
        reason = row.reason or "pruned"
        if reason == "empty parent":
            reason = next(
                (
                    inner.reason
                    for inner in rows[number + 1 :]
                    if inner.reason and inner.reason != "empty parent"
                ),
                reason,
            )
        found.append(Pruned(row.id, int(row.tokens_before), reason))
        inside = row.depth
    return tuple(found)


def prompt_nodes(
    tree: PromptTree, rendered: Rendered, budget: int, window: int
) -> tuple[PromptNode, ...]:
    """The prunable units with the budget below which the renderer starts pruning each.

    The renderer removes the lowest priority first (the section's, then the unit's within it;
    ties: the first in the prompt), so a unit goes once the budget is below the content's
    rendered size less the units removed before it (the renderer's sizes, framing included)."""
    sizes = rendered.tokens_before
    total = sum(sizes.get(str(getattr(child, "id", "")), 0) for child in tree.children)
    before = 0
    goes_below: dict[str, int] = {}
    for unit in sorted(tree.units, key=lambda unit: unit.rank):
        goes_below[unit.id] = total - before
        before += sizes.get(unit.id, unit.tokens)
    return tuple(
        PromptNode(
            id=unit.id,
            section=unit.section,
            tokens=unit.tokens,
            priority=unit.priority,
            prunable=True,
            pruned_at_budget=goes_below[unit.id],
            # As the context grows, the unit goes when the content reaches the budget plus
            # what the renderer removes before it.
            pruned_at_fill=(
                round((budget + total - goes_below[unit.id]) / window, 4) if window else None
            ),
        )
        for unit in tree.units
    )

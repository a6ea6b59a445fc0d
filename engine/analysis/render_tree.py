"""The profile's prompt tree for the current context, rendered by the prompt renderer
(engine/render) to the budget: its per-element budgets, what it prunes and why.

Each message becomes a message element whose text is as many words as the message has tokens
(rendered with the renderer's ``words`` tokenizer), so the renderer sizes every element by
ctxtop's token counts without tokenizing the session a second time; the renderer adds its own
3 tokens of framing per message. Tool results in a section with ``truncate_results`` are cut to
the profile's limit first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.analysis.profiles import Profile, SectionSpec
from engine.analysis.sections import is_typed_user_message, section_of
from engine.analysis.snapshot import Pruned, RenderedElement
from engine.analysis.tree import truncated
from engine.render.model import Child, Element, assistant, elem, prioritized_list, system, user
from engine.render.model import token_limit as limit_element
from engine.render.model import tool as tool_element
from engine.render.renderer import render
from engine.render.report import build_report
from engine.sessions.model import Message

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


@dataclass(frozen=True, slots=True)
class Rendered:
    budgets: dict[str, int]  # element id -> the budget the renderer gave it
    tokens: dict[str, int]  # element id -> its tokens in the result (0 when pruned)
    tokens_before: dict[str, int]
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


def _message(message: Message, size: int, element_id: str) -> Element:
    text = _words(size)
    if message.role == "assistant":
        return assistant(text, id=element_id)
    if message.role == "tool":
        call = next((b.tool_call_id for b in message.blocks if b.tool_call_id), None)
        return tool_element(text, tool_call_id=call or message.id, id=element_id)
    if message.role in ("system", "developer"):
        return system(text, id=element_id)
    return user(text, id=element_id)


def _unique(base: str, used: set[str]) -> str:
    """Element ids must be unique; a log may hold two messages under one id."""
    candidate, number = base, 1
    while candidate in used:
        number += 1
        candidate = f"{base}#{number}"
    used.add(candidate)
    return candidate


def build_tree(
    profile: Profile,
    context: Sequence[Message],
    kinds: Sequence[str],
    tokens: Sequence[int],
    user_index: int | None,
    budget: int,
    system_tokens: int,
) -> list[Child]:
    contents = frozenset(spec.content for spec in profile.sections)
    specs = {spec.content: spec for spec in profile.sections}
    members: dict[str, list[Element]] = {name: [] for name in contents}
    rounds: list[list[Element]] = []
    used: set[str] = {spec.name for spec in profile.sections}
    for index, kind in enumerate(kinds):
        name = section_of(kind, index, user_index, contents)
        if name not in contents:
            name = "messages" if "messages" in contents else "history"
        spec = specs[name]
        size = tokens[index]
        cut = spec.truncate_results
        if cut is not None and any(b.kind == "tool_result" for b in context[index].blocks):
            size = truncated(size, int(budget * cut.max_fraction))
        element = _message(context[index], size, _unique(f"m:{context[index].id}", used))
        if spec.prioritized_list:
            if not rounds or is_typed_user_message(context[index]):
                rounds.append([])
            rounds[-1].append(element)
        else:
            members[name].append(element)
    tree: list[Child] = []
    for content in PROMPT_ORDER:
        if content not in specs:
            continue
        spec = specs[content]
        props = _flex(spec, budget)
        section: Element
        if content == "system":
            section = system(_words(system_tokens), **props)
        elif spec.prioritized_list:
            children: list[Child] = [
                elem(*items, id=f"{spec.name}/round-{number + 1}")
                for number, items in enumerate(rounds)
            ]
            section = prioritized_list(*children, **props)
        else:
            section = elem(*members[content], **props)
        limit = spec.limit(budget)
        if limit is not None:
            inner_id = props.pop("id")
            section.id = f"{inner_id}/content"
            section.flex_grow = section.flex_basis = None
            section.flex_reserve = None
            section = limit_element(section, max=limit, **props, id=inner_id)
        tree.append(section)
    return tree


def render_tree(tree: list[Child], budget: int) -> Rendered:
    result = render(tree, budget=budget, tokenizer="words", mode="exact")
    report = build_report(result)
    pruned = tuple(
        Pruned(row.id, int(row.tokens_before), row.reason or "pruned")
        for row in report.elements
        if row.pruned and not (row.reason or "").startswith("inside ")
    )
    return Rendered(
        budgets={key: int(value) for key, value in result.budgets.items()},
        tokens={row.id: int(row.tokens) for row in report.elements},
        tokens_before={row.id: int(row.tokens_before) for row in report.elements},
        pruned=pruned,
        elements=tuple(
            RenderedElement(
                id=row.id,
                budget=None if row.budget is None else int(row.budget),
                tokens_before=int(row.tokens_before),
                tokens=int(row.tokens),
                pruned=row.pruned,
                reason=row.reason,
            )
            for row in report.elements
            if not row.id.startswith(("m:", "#"))
        ),
        token_count=None if result.token_count is None else int(result.token_count),
        error=report.error,
    )

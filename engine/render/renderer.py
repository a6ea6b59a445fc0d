"""Render a prompt tree to a budget: flex render, materialize, grow, enforce TokenLimits, prune.

``mode="prompt-tsx"`` reproduces @vscode/prompt-tsx 0.4.0-alpha.9 exactly, quirks included.
``mode="exact"`` (ctxtop's default) corrects the quirks that make counts wrong or prune more than
needed; each correction is listed in docs/render.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ctxtop.engine.render.collections_paused import collections_paused
from ctxtop.engine.render.elements import MAX_PRIORITY, Child, Sizing
from ctxtop.engine.render.loader import TreeDocument, assign_missing_ids
from ctxtop.engine.render.materialized import (
    BREAK_IF_NOT_TEXT_SIBLING,
    CONTAINER,
    DOCUMENT,
    IMAGE,
    MESSAGE,
    Branch,
    Container,
    Counting,
    Node,
    TextOutsideMessageError,
    TextPart,
    messages_of,
)
from ctxtop.engine.render.phase import RenderError, RenderPhase, RenderPhaseResult
from ctxtop.engine.render.prune import BudgetExceededError, NoLowestNodeError, Pruner
from ctxtop.engine.render.tokenizers import Tokenizer, get_tokenizer

MODES = ("exact", "prompt-tsx")
LIBRARY = "@vscode/prompt-tsx@0.4.0-alpha.9"
SAVINGS_MARGIN = 1.25  # the library's buffer on estimated savings (PR #172)
# Exact mode recounts precisely once the estimated overage is this small (see _prune_exactly).
PRECISE_MARGIN = 64
ID_KINDS = (CONTAINER, MESSAGE, IMAGE, DOCUMENT)  # the nodes that carry an element id


@dataclass
class RenderFailure:
    """The library's error for a tree it cannot render (``type`` is its class name)."""

    type: str
    message: str
    unpruned_messages: list[dict[str, Any]] | None = None


@dataclass
class RenderResult:
    """One render: the oracle's fields (``messages`` are the library's Raw messages as dicts;
    ``pruned``/``absent`` element ids; ``budgets`` per element id) or ``error``, plus what the
    report needs (the trees and every removal with its reason and the TokenLimit enforced)."""

    budget: int
    tokenizer: str
    mode: str
    token_count: float | None = None
    messages: list[dict[str, Any]] | None = None
    pruned: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)
    removed_count: int = 0
    budgets: dict[str, float] = field(default_factory=dict)
    consumed: dict[str, float] = field(default_factory=dict)
    expandable_calls: list[dict[str, Any]] = field(default_factory=list)
    error: RenderFailure | None = None
    # for the report
    initial_tree_factory: Callable[[], Node] | None = None
    final_tree: Node | None = None
    removals: list[tuple[Node, str, str | None]] = field(default_factory=list)


def render(
    tree: TreeDocument | list[Child],
    budget: int | None = None,
    tokenizer: str | None = None,
    mode: str = "exact",
    indexed: bool = True,
    prune: bool = True,
) -> RenderResult:
    """Renders ``tree`` (a loaded document or a list of root children) to ``budget`` tokens.

    ``indexed=False`` prunes with the library's literal scans and whole-tree keep-with walks
    instead of the candidate heaps and group index: same result, much slower (for checking).
    ``prune=False`` lays the tree out (budgets, token count) without pruning: a tree over the
    budget is a ``BudgetExceededError`` that keeps the whole tree and its count (for prompts
    whose agent compacts instead of pruning)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    if isinstance(tree, TreeDocument):
        document = tree
    else:
        document = TreeDocument(root=list(tree))
        assign_missing_ids(document.root)
    budget_value = budget if budget is not None else document.budget
    if budget_value is None:
        budget_value = MAX_PRIORITY
    tokenizer_name = tokenizer or document.tokenizer or "words"
    run = _Run(get_tokenizer(tokenizer_name), mode == "exact", indexed)
    run.prune = prune
    result = RenderResult(budget_value, tokenizer_name, mode)
    with collections_paused():
        run.render(document.root, budget_value, result)
    return result


class _Run:
    def __init__(self, tokenizer: Tokenizer, exact: bool, indexed: bool = True) -> None:
        self.tokenizer = tokenizer
        self.counting = Counting(tokenizer, exact)
        self.pruner = Pruner(self.counting, fast=indexed)
        self.phase: RenderPhaseResult | None = None
        self.budget: float = 0
        self.prune = True

    def render(self, children: list[Child], budget: int, result: RenderResult) -> None:
        self.budget = budget
        keep_with_ids: dict[str, int] = {}
        phase_runner = RenderPhase(self.tokenizer, self.counting.exact, keep_with_ids)
        try:
            phase = self.phase = phase_runner.run(children, budget)
        except RenderError as error:
            result.budgets = phase_runner.budgets
            result.expandable_calls = phase_runner.expandable_calls
            result.error = RenderFailure(error.type_name, str(error))
            return
        result.budgets = phase.budgets
        result.consumed = phase.consumed
        result.expandable_calls = phase.expandable_calls
        root = phase.root
        initial_ids = collect_ids(root)
        result.initial_tree_factory = lambda: self._laid_out(children, budget)
        try:
            # (Also fills the messages' text caches, which the library's counting keeps.)
            original = [message.to_raw() for message in messages_of(root)]
        except TextOutsideMessageError as error:
            result.error = RenderFailure("Error", str(error))
            return
        if not self.prune:
            self._whole(root, budget, original, result)
            result.absent = _absent(phase.created_ids, initial_ids)
            return
        try:
            removed = self._fit(root, budget, phase)
        except BudgetExceededError as error:
            result.error = RenderFailure("BudgetExceededError", str(error), original)
            return
        except NoLowestNodeError as error:
            result.error = RenderFailure("Error", str(error))
            return
        try:
            result.messages = [message.to_raw() for message in messages_of(root)]
        except TextOutsideMessageError as error:
            result.error = RenderFailure("Error", str(error))
            return
        result.token_count = root.token_count(self.counting)
        final_ids = set(collect_ids(root))
        result.pruned = [node_id for node_id in initial_ids if node_id not in final_ids]
        result.absent = _absent(phase.created_ids, initial_ids)
        result.removed_count = removed
        result.final_tree = root
        result.removals = [
            # the label written out here: once per removal, tens of thousands
            (node, why, None if limit is None else f"TokenLimit {limit:g}")
            for node, why, limit in self.pruner.events
        ]

    def _laid_out(self, children: list[Child], budget: int) -> Node:
        """The tree as the render phase lays it out, before any pruning or growth (laid out
        again: pruning changes the tree in place; an Expandable's value is asked again)."""
        return RenderPhase(self.tokenizer, self.counting.exact, {}).run(children, budget).root

    def _whole(
        self, root: Branch, budget: int, messages: list[dict[str, Any]], result: RenderResult
    ) -> None:
        """``prune=False``: the tree as laid out, nothing removed (so the messages are the
        ones taken before, and no id is pruned); over the budget it is an error."""
        count = root.token_count(self.counting)
        result.token_count = count
        result.final_tree = root
        if count > budget:
            message = f"{count:g} tokens over the budget of {budget:g}, nothing pruned"
            result.error = RenderFailure("BudgetExceededError", message, messages)
        else:
            result.messages = messages

    def _fit(self, root: Branch, budget: int, phase: RenderPhaseResult) -> int:
        counting = self.counting
        limits: list[tuple[Any, int]] = [(budget, root.node_id), *phase.token_limits]
        removed_total = 0
        for limit, node_id in reversed(limits):
            if limit is None or limit > budget:
                continue
            container = root.find(node_id)
            if container is None:
                continue
            self.pruner.limit = None if container is root else limit
            count = container.token_count(counting)
            if count < limit and not self._grow(container, count, limit, phase):
                continue
            count = container.token_count(counting)
            if counting.exact:
                removed_total += self._prune_exactly(container, count, limit)
                continue
            while count > limit:
                overhead = container.base_tokens(counting)
                while True:
                    removed: list[Node] = []
                    self.pruner.remove_lowest(container, removed)
                    for node in removed:
                        removed_total += 1
                        count -= node.upper_bound(counting) * SAVINGS_MARGIN
                    if not count - overhead > limit:
                        break
                count = container.token_count(counting)
        return removed_total

    def _prune_exactly(self, container: Branch, count: float, limit: float) -> int:
        """Exact mode: remove in priority order until the precise count fits, no further.

        The precise count is taken before every removal that could reach the limit: while the
        upper-bound estimate of what is left is more than ``PRECISE_MARGIN`` above it, removals
        go on without recounting (re-tokenizing a long message after each of thousands of small
        removals would be quadratic). Dropped tool calls are not in the estimate: recount.
        """
        counting = self.counting
        pruner = self.pruner
        removed_total = 0
        while count > limit:
            estimate = count
            while True:
                removed: list[Node] = []
                pruner.calls_dropped = False
                pruner.remove_lowest(container, removed)
                removed_total += len(removed)
                for node in removed:
                    estimate -= node.upper_bound(counting)
                if pruner.calls_dropped or estimate - limit <= PRECISE_MARGIN:
                    break
            count = container.token_count(counting)
        return removed_total

    def _grow(self, tree: Branch, used: float, limit: float, phase: RenderPhaseResult) -> bool:
        if not phase.growables:
            return False
        exact = self.counting.exact
        for growable in phase.growables:
            node_id = growable.node.node_id
            current = tree.find(node_id)
            if current is None:
                continue
            budget = limit - used + growable.initial_consume
            if exact:
                budget = min(budget, self._room_around(current, phase))
            phase.expandable_calls.append({"id": growable.element.id, "budget": budget})
            text = growable.element.props["value"](Sizing(budget, self.tokenizer.text_tokens))
            tokens = self.tokenizer.text_tokens(text)
            consumed = budget if tokens > budget else tokens
            element = growable.element
            priority: float = MAX_PRIORITY
            flags = 0
            if exact:  # keep the Expandable's own priority and flags
                priority = MAX_PRIORITY if element.priority is None else element.priority
                flags = growable.node.flags
            replacement = Container(None, node_id, None, priority, flags)
            replacement.json_id = element.id
            replacement.children = [
                TextPart(replacement, text, priority, BREAK_IF_NOT_TEXT_SIBLING)
            ]
            replacement.seq = current.seq
            replacement.children[0].seq = current.seq - 0.5
            tree.replace(node_id, replacement, exact)
            used = used - growable.initial_consume + consumed
            if used >= limit:
                break
        self.pruner.index.reset()
        return True

    def _room_around(self, node: Branch, phase: RenderPhaseResult) -> float:
        """Exact mode: a grown Expandable must still fit every TokenLimit around it and the
        whole budget (the library sizes it for one limit only and can overshoot the others)."""
        maxima = {node_id: limit for limit, node_id in phase.token_limits if limit is not None}
        room = float("inf")
        own = node.token_count(self.counting)
        parent = node.parent
        while parent is not None:
            limit = self.budget if parent.parent is None else maxima.get(parent.node_id)
            if limit is not None and isinstance(parent, Container):
                room = min(room, limit - parent.token_count(self.counting) + own)
            parent = parent.parent
        return room


def _absent(created: list[str], initial: list[str]) -> list[str]:
    """Ids of elements rendered but not in the tree laid out (an IfEmpty's other branch)."""
    if len(created) == len(initial):  # ids are unique and the tree's are all created ones
        return []
    known = set(initial)
    return [node_id for node_id in created if node_id not in known]


def collect_ids(root: Node) -> list[str]:
    """Ids of elements in the tree, pre-order (containers, messages, images, documents)."""
    ids: list[str] = []
    if root.json_id is not None and root.kind in ID_KINDS:
        ids.append(root.json_id)

    def visit(branch: Branch) -> None:
        for child in branch.children:
            if child.json_id is not None and child.kind in ID_KINDS:
                ids.append(child.json_id)
            if isinstance(child, Branch):
                visit(child)

    if isinstance(root, Branch):
        visit(root)
    return ids

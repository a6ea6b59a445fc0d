"""Removing the lowest-priority node, and what goes with it (empty parents, keep-with groups).

The selection walks down from the container being fitted: among the candidates of a level (after
the last cache breakpoint; ``passPriority`` children compete with their parent's siblings) the
lowest priority wins, ties going to the one whose lowest direct child is lower, then to the first.
Content, Chunks and childless containers are removed; otherwise the walk descends.
``CandidateIndex`` answers the same question without rescanning wide levels (see its docstring).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Any

from engine.render.materialized import (
    BREAKPOINT,
    CONTAINER,
    FLAG_CHUNK,
    FLAG_LEGACY,
    FLAG_PASS_PRIORITY,
    MAX_PRIORITY_FLOAT,
    MESSAGE,
    Branch,
    Container,
    Counting,
    Message,
    Node,
)


class BudgetExceededError(Exception):
    """Nothing left that may be pruned under ``node``; ``path`` names the way from the root."""

    def __init__(self, node: Node) -> None:
        path: list[Node] = [node]
        while path[0].parent is not None:
            parent = path[0].parent
            assert parent is not None
            path.insert(0, parent)
        parts = []
        for step in path:
            if isinstance(step, Message):
                parts.append(str(step.role))
            elif isinstance(step, Container):
                parts.append(step.name or "(anonymous)")
        self.path = parts
        self.node = node
        super().__init__(f"No lowest priority node found (path: {' -> '.join(parts)})")


class NoLowestNodeError(Exception):
    """LegacyPrioritization found no content to remove (a plain Error in the library)."""


def has_cache_point(node: Node) -> bool:
    known = node.cache_point
    if known is not None:
        return known
    if node.kind == BREAKPOINT:
        result = True
    elif node.kind == MESSAGE:
        assert isinstance(node, Branch)
        result = any(child.kind == BREAKPOINT for child in node.children)
    elif node.kind == CONTAINER:
        assert isinstance(node, Branch)
        result = any(has_cache_point(child) for child in node.children)
    else:
        result = False
    node.cache_point = result
    return result


def looks_for_cache_points(node: Node) -> bool:
    """Breakpoints protect earlier content at message level and above, not inside messages."""
    if node.kind == MESSAGE:
        return True
    parent = node.parent
    while parent is not None:
        if parent.kind == MESSAGE:
            return False
        parent = parent.parent
    return True


def lowest_child_priority(node: Node) -> float:
    if not isinstance(node, Branch):
        return -1
    lowest: float = MAX_PRIORITY_FLOAT
    for child in node.children:
        if child.priority < lowest:
            lowest = child.priority
    return lowest


def is_removable_whole(node: Node) -> bool:
    if not isinstance(node, Branch):
        return True
    if node.kind == CONTAINER and node.flags & FLAG_CHUNK:  # type: ignore[attr-defined]
        return True
    return not node.children


class Pruner:
    """Removes nodes from one materialized tree; counts every removal."""

    def __init__(self, counting: Counting, fast: bool = True) -> None:
        self.counting = counting
        self.fast = fast
        self._removing_groups: set[int] = set()
        self.index = CandidateIndex()
        self.limit: float | None = None  # the TokenLimit being enforced (None: the budget)
        self.events: list[tuple[Node, str, float | None]] = []  # (node, why, limit): the report

    # -- selection -----------------------------------------------------------------------
    def remove_lowest(self, node: Branch, removed: list[Node]) -> None:
        while True:
            if node.kind == CONTAINER and node.flags & FLAG_LEGACY:  # type: ignore[attr-defined]
                self._remove_lowest_legacy(node, removed)
                return
            lowest = self.index.lowest(node) if self.fast else scan_lowest(node)
            if lowest is None:
                raise BudgetExceededError(node)
            if is_removable_whole(lowest):
                self.remove_node(lowest, removed, "priority")
                return
            assert isinstance(lowest, Branch)
            node = lowest

    def _remove_lowest_legacy(self, root: Branch, removed: list[Node]) -> None:
        lowest: Node | None = None
        stack: list[Node] = [root]
        # depth-first, document order; the first of equal priorities wins
        while stack:
            node = stack.pop()
            if isinstance(node, Branch):
                stack.extend(reversed(node.children))
            elif lowest is None or node.priority < lowest.priority:
                lowest = node
        if lowest is None:
            raise NoLowestNodeError("No lowest priority node found")
        self.remove_node(lowest, removed, "priority")

    # -- removal -------------------------------------------------------------------------
    def remove_node(self, node: Node, removed: list[Node], why: str) -> None:
        parent = node.parent
        if parent is None or node.removed:
            return
        children = parent.children
        try:
            index = _index_of(children, node)
        except ValueError:
            return
        del children[index]
        node.removed = True
        removed.append(node)
        self.events.append((node, why, self.limit))
        self._remove_other_keep_withs(node, removed)
        if parent.is_empty():
            self.remove_node(parent, removed, "empty parent")
        else:
            parent.on_chunks_change()

    def _remove_other_keep_withs(self, gone: Node, removed: list[Node]) -> None:
        groups: set[int] = set()
        for node in _each_node(gone):
            group = _keep_with_id(node)
            if group is not None and group not in self._removing_groups:
                groups.add(group)
        if not groups:
            return
        self._removing_groups |= groups
        try:
            root: Node = gone
            while root.parent is not None:
                root = root.parent
            for node in _each_node(root):
                group = _keep_with_id(node)
                if group is not None and group in groups:
                    self.remove_node(node, removed, "keep-with")
                elif isinstance(node, Message) and node.tool_calls is not None:
                    kept = [
                        call
                        for call in node.tool_calls
                        if call.get("keepWith") is None or call["keepWith"] not in groups
                    ]
                    if len(kept) != len(node.tool_calls):
                        node.tool_calls = kept
                        if self.counting.exact:
                            node.forget_counts()
                    if node.is_empty():
                        self.remove_node(node, removed, "keep-with")
        finally:
            self._removing_groups -= groups


def _index_of(children: list[Node], node: Node) -> int:
    for index, child in enumerate(children):
        if child is node:
            return index
    raise ValueError


def _keep_with_id(node: Node) -> int | None:
    if node.kind == CONTAINER:
        return node.keep_with_id  # type: ignore[attr-defined,no-any-return]
    return None


def _each_node(start: Node) -> Iterator[Node]:
    """The library's traversal: a stack, children pushed after the node was handled."""
    stack: list[Node] = [start]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, Branch):
            stack.extend(current.children)


def scan_lowest(node: Branch) -> Node | None:
    """The library's scan of one level (reference for ``CandidateIndex``)."""
    look = looks_for_cache_points(node)
    queue: list[Node] = list(node.children)
    lowest: Node | None = None
    lowest_nested: float | None = None
    index = 0
    while index < len(queue):
        child = queue[index]
        index += 1
        if look and has_cache_point(child):
            lowest = None
            if child.kind == BREAKPOINT:
                continue
        if (
            child.kind == CONTAINER
            and child.flags & FLAG_PASS_PRIORITY  # type: ignore[attr-defined]
            and child.children  # type: ignore[attr-defined]
        ):
            queue[index:index] = child.children  # type: ignore[attr-defined]
        elif lowest is None or child.priority < lowest.priority:
            lowest = child
            lowest_nested = None
        elif child.priority == lowest.priority:
            if lowest_nested is None:
                lowest_nested = lowest_child_priority(lowest)
            nested = lowest_child_priority(child)
            if nested < lowest_nested:
                lowest = child
                lowest_nested = nested
    return lowest


class CandidateIndex:
    """Per-level heaps of candidates keyed (priority, lowest child priority, position).

    A level's candidates only disappear, and a candidate's lowest child priority only rises as
    its children go, so stale heap entries are fixed when they surface (popped, re-keyed).
    Levels with cache breakpoints or passPriority children are scanned as the library does.
    """

    def __init__(self) -> None:
        self._heaps: dict[int, list[tuple[float, float, int, Node]]] = {}
        self._scan_only: set[int] = set()

    def reset(self) -> None:
        self._heaps.clear()
        self._scan_only.clear()

    def lowest(self, node: Branch) -> Node | None:
        key = id(node)
        if key in self._scan_only:
            return scan_lowest(node)
        heap = self._heaps.get(key)
        if heap is None:
            if len(node.children) < 8 or not self._plain_level(node):
                self._scan_only.add(key)
                return scan_lowest(node)
            heap = [
                (child.priority, lowest_child_priority(child), position, child)
                for position, child in enumerate(node.children)
            ]
            heapq.heapify(heap)
            self._heaps[key] = heap
        while heap:
            priority, nested, position, child = heap[0]
            if child.removed or child.parent is not node:
                heapq.heappop(heap)
                continue
            current = lowest_child_priority(child)
            if current != nested:
                heapq.heapreplace(heap, (priority, current, position, child))
                continue
            return child
        return None

    def _plain_level(self, node: Branch) -> bool:
        look = looks_for_cache_points(node)
        for child in node.children:
            if look and has_cache_point(child):
                return False
            if child.kind == CONTAINER and child.flags & FLAG_PASS_PRIORITY:  # type: ignore[attr-defined]
                return False
        return True


def heap_entry_count(index: CandidateIndex) -> int:
    return sum(len(heap) for heap in index._heaps.values())


__all__: list[Any] = [
    "BudgetExceededError",
    "CandidateIndex",
    "NoLowestNodeError",
    "Pruner",
    "has_cache_point",
    "scan_lowest",
]

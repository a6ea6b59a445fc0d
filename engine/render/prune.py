"""Removing the lowest-priority node, and what goes with it (empty parents, keep-with groups).

The selection walks down from the container being fitted: among the candidates of a level (after
the last cache breakpoint; ``passPriority`` children compete with their parent's siblings) the
lowest priority wins, ties going to the one whose lowest direct child is lower, then to the first.
Content, Chunks and childless containers are removed; otherwise the walk descends.
``CandidateIndex`` answers the same question without rescanning wide levels (see its docstring).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Iterator
from operator import attrgetter

from ctxtop.engine.render.materialized import (
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
    inside_message,
)

# A node's post-order number, for bisection and sorting (a C getter: called per probe).
_seq = attrgetter("seq")
# Levels this short are scanned, and searched child by child, rather than indexed.
SHORT_LEVEL = 7


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
        result = False
        for child in node.children:  # a loop, not any(): once per message of every render
            if child.kind == BREAKPOINT:
                result = True
                break
    elif node.kind == CONTAINER:
        assert isinstance(node, Branch)
        result = any(has_cache_point(child) for child in node.children)
    else:
        result = False
    node.cache_point = result
    return result


def looks_for_cache_points(node: Node) -> bool:
    """Breakpoints protect earlier content at message level and above, not inside messages."""
    return node.kind == MESSAGE or not inside_message(node)


def lowest_child_priority(node: Node) -> float:
    if not isinstance(node, Branch):
        return -1
    lowest: float = MAX_PRIORITY_FLOAT
    for child in node.children:
        if child.priority < lowest:
            lowest = child.priority
    return lowest


class Pruner:
    """Removes nodes from one materialized tree; counts every removal."""

    def __init__(self, counting: Counting, fast: bool = True) -> None:
        self.counting = counting
        self.fast = fast
        self._removing_groups: set[int] = set()
        self.index = CandidateIndex()
        self.limit: float | None = None  # the TokenLimit being enforced (None: the budget)
        # keep-with bookkeeping for the fast cascade (see index_tree)
        self._group_nodes: dict[int, list[Node]] = {}
        self._call_messages: dict[int, list[Message]] = {}
        self._empty_call_messages: set[Message] = set()
        self._keep_withs_below: dict[int, int] = {}
        self._frames: list[_Traversal] = []
        self._exhausted: set[Node] = set()
        self.calls_dropped = False  # exact mode: a message lost tool calls (its count changed)
        self._indexed = False
        self.events: list[tuple[Node, str, float | None]] = []  # (node, why, limit): the report

    def index_tree(self, root: Node) -> None:
        """Numbers nodes in post-order (``seq``) and indexes keep-with groups and tool calls.

        Post-order numbers grow along siblings, so a child is found in its parent by bisection;
        the library's keep-with traversal (right to left, parents first) is descending post-order.
        """
        below = self._keep_withs_below
        group_nodes = self._group_nodes
        call_messages = self._call_messages

        def number(node: Branch, counter: int) -> int:
            """Numbers ``node``'s subtree from ``counter``; returns the next number."""
            count = 0
            for child in node.children:
                if isinstance(child, Branch):
                    counter = number(child, counter)
                    count += below.get(id(child), 0)
                else:
                    child.seq = counter
                    counter += 1
            node.seq = counter
            if node.kind == CONTAINER:  # (_keep_with_id, for every container of the tree)
                group = node.keep_with_id  # type: ignore[attr-defined]
                if group is not None:
                    group_nodes.setdefault(group, []).append(node)
                    count += 1
            else:  # a message
                message: Message = node  # type: ignore[assignment]
                calls = message.tool_calls
                if calls is not None:
                    # An empty message with an empty call list is removed by any keep-with
                    # walk that reaches it; one emptied later is removed on the spot instead.
                    if not calls and message.is_empty():
                        self._empty_call_messages.add(message)
                    for call in calls:
                        if call.get("keepWith") is not None:
                            listed = call_messages.setdefault(call["keepWith"], [])
                            if not listed or listed[-1] is not message:
                                listed.append(message)
            if count:
                below[id(node)] = count
            return counter + 1

        if isinstance(root, Branch):
            number(root, 0)
        else:
            root.seq = 0

    # -- selection -----------------------------------------------------------------------
    def remove_lowest(self, top: Branch, removed: list[Node]) -> None:
        exact = self.counting.exact
        skip = self._exhausted if exact else None
        if self.fast and not self._indexed:
            # on the first removal: renders that fit never pay for it
            self.index_tree(_root_of(top))
            self._indexed = True
        scanned = self.index.scanned
        node = top
        while True:
            if node.kind == CONTAINER and node.flags & FLAG_LEGACY:  # type: ignore[attr-defined]
                self._remove_lowest_legacy(node, removed)
                return
            if self.fast:
                look = scanned.get(id(node))  # a short level: scanned without the index
                if look is None:
                    lowest = self.index.lowest(node, skip)
                else:
                    lowest = scan_lowest(node, skip, look)
            else:
                lowest = scan_lowest(node, skip)
            if lowest is None:
                if exact and node is not top:
                    # exact mode backtracks: this subtree has nothing left to prune (its
                    # content is protected), so the next-lowest sibling is tried instead
                    self._exhausted.add(node)
                    node = top
                    continue
                raise BudgetExceededError(node)
            # content, a Chunk or a container without children goes whole; else descend
            if (
                not isinstance(lowest, Branch)
                or not lowest.children
                or (lowest.kind == CONTAINER and lowest.flags & FLAG_CHUNK)  # type: ignore[attr-defined]
            ):
                self.remove_node(lowest, removed, "priority")
                return
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
        if self.fast and len(children) > SHORT_LEVEL:
            index = bisect_left(children, node.seq, key=_seq)
            if index >= len(children) or children[index] is not node:
                return
        else:
            try:
                index = children.index(node)  # by identity: nodes define no __eq__
            except ValueError:
                return
        del children[index]
        node.removed = True
        if isinstance(parent, Container):
            parent.child_detached(node)
        for frame in self._frames:
            frame.detached.setdefault(node, frame.clock)
        removed.append(node)
        self.events.append((node, why, self.limit))
        if self.fast:
            if id(node) in self._keep_withs_below:  # else it holds no keep-with group
                self._cascade_keep_withs(node, removed)
        else:
            self._remove_other_keep_withs(node, removed)
        if parent.is_empty():
            # A container emptied by losing its own text went for the text's reason.
            self.remove_node(parent, removed, why if node.json_id is None else "empty parent")
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
            root = _root_of(gone)
            for node in _each_node(root):
                group = _keep_with_id(node)
                if group is not None and group in groups:
                    self.remove_node(node, removed, "keep-with")
                elif isinstance(node, Message) and node.tool_calls is not None:
                    self._drop_calls(node, groups, removed)
        finally:
            self._removing_groups -= groups

    def _cascade_keep_withs(self, gone: Node, removed: list[Node]) -> None:
        """``_remove_other_keep_withs`` without walking the whole tree.

        Only group members, messages calling the group, and empty messages with a (now empty)
        tool-call list can be affected; they are visited in the library's order, and one is
        skipped when the library's walk would not reach it: an edge parent -> child on its path
        was cut before the walk began, or during it but no later than the parent's own visit.
        """
        groups: set[int] = set()
        below = self._keep_withs_below
        stack: list[Node] = [gone]
        while stack:
            node = stack.pop()
            if id(node) not in below:
                continue
            group = _keep_with_id(node)
            if group is not None and group not in self._removing_groups:
                groups.add(group)
            stack.extend(node.children)  # type: ignore[attr-defined]
        if not groups:
            return
        self._removing_groups |= groups
        frame = _Traversal()
        self._frames.append(frame)
        try:
            root = _root_of(gone)
            affected: set[Node] = set(self._empty_call_messages)
            for group in groups:
                affected.update(self._group_nodes.get(group, ()))
                affected.update(self._call_messages.get(group, ()))
            for node in sorted(affected, key=_seq, reverse=True):
                frame.clock = node.seq
                if not frame.reaches(node, root):
                    continue
                group = _keep_with_id(node)
                if group is not None and group in groups:
                    self.remove_node(node, removed, "keep-with")
                elif isinstance(node, Message) and node.tool_calls is not None:
                    self._drop_calls(node, groups, removed)
        finally:
            self._frames.pop()
            self._removing_groups -= groups

    def _drop_calls(self, message: Message, groups: set[int], removed: list[Node]) -> None:
        calls = message.tool_calls
        assert calls is not None
        kept = [c for c in calls if c.get("keepWith") is None or c["keepWith"] not in groups]
        if len(kept) != len(calls):
            message.set_tool_calls(kept)
            if self.counting.exact:
                message.forget_counts()
                self.calls_dropped = True
        if message.is_empty():
            self.remove_node(message, removed, "keep-with")


class _Traversal:
    """One library keep-with walk being simulated: when each node was cut off during it."""

    __slots__ = ("clock", "detached")

    def __init__(self) -> None:
        self.clock: float = 0
        self.detached: dict[Node, float] = {}

    def reaches(self, node: Node, root: Node) -> bool:
        child = node
        while True:
            parent = child.parent
            if parent is None:
                return child is root
            if child.removed:
                cut = self.detached.get(child)
                if cut is None or not parent.seq > cut:
                    return False
            child = parent


def _root_of(node: Node) -> Node:
    while node.parent is not None:
        node = node.parent
    return node


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


def scan_lowest(
    node: Branch, skip: set[Node] | None = None, look: bool | None = None
) -> Node | None:
    """The library's scan of one level (reference for ``CandidateIndex``); ``skip``: exhausted;
    ``look``: ``looks_for_cache_points(node)`` if known."""
    if look is None:
        look = looks_for_cache_points(node)
    queue: list[Node] = node.children
    if len(queue) == 1:  # one child (a message's content, a wrapper): the loop below, unrolled
        child = queue[0]
        if not (child.kind == CONTAINER and child.flags & FLAG_PASS_PRIORITY and child.children):  # type: ignore[attr-defined]
            if (look and child.kind == BREAKPOINT) or (skip and child in skip):
                return None
            return child
    spliced = False
    lowest: Node | None = None
    lowest_nested: float | None = None
    index = 0
    while index < len(queue):
        child = queue[index]
        index += 1
        if look:
            holds = child.cache_point
            if holds is None:
                holds = has_cache_point(child)
            if holds:
                lowest = None
                if child.kind == BREAKPOINT:
                    continue
        if (
            child.kind == CONTAINER
            and child.flags & FLAG_PASS_PRIORITY  # type: ignore[attr-defined]
            and child.children  # type: ignore[attr-defined]
        ):
            if not spliced:
                queue, spliced = list(queue), True
            queue[index:index] = child.children  # type: ignore[attr-defined]
        elif skip and child in skip:
            continue
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
        # levels scanned as the library does -> looks_for_cache_points(level)
        self.scanned: dict[int, bool] = {}

    def reset(self) -> None:
        self._heaps.clear()
        self.scanned.clear()

    def lowest(self, node: Branch, skip: set[Node] | None = None) -> Node | None:
        key = id(node)
        look = self.scanned.get(key)
        if look is not None:
            return scan_lowest(node, skip, look)
        heap = self._heaps.get(key)
        if heap is None:
            if len(node.children) <= SHORT_LEVEL or not self._plain_level(node):
                look = self.scanned[key] = looks_for_cache_points(node)
                return scan_lowest(node, skip, look)
            heap = [
                (child.priority, lowest_child_priority(child), position, child)
                for position, child in enumerate(node.children)
            ]
            heapq.heapify(heap)
            self._heaps[key] = heap
        while heap:
            priority, nested, position, child = heap[0]
            if child.removed or child.parent is not node or (skip and child in skip):
                heapq.heappop(heap)  # gone, or exhausted for good (candidates only disappear)
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

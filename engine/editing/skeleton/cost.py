"""The dense text tree over the regions, and what each region costs to keep.

Every character belongs to exactly one leaf: a region without sub-regions, or a *gap* (text of a
region between its sub-regions: a function's header line, a closing brace). A kept region shows
its gaps; its sub-regions show only if kept too. Cheapest regions are kept first:

    cost = 100 * scope distance to the focus + depth
           + 50 inside a function body + 0.5 for a comment
           outside bodies: + 2 for a block of several lines with nothing to outline inside (a
             long string, a table): content, not outline, so the next level's signatures come
             first; - 0.5 for a region with an outline of its own (a class, a function), so that
             at one depth the headers of methods come before fields and properties
           + 10 * character distance to the focus / length (3x for text after it)

and imports cost 0. Without a focus only depth, body and comment count: outlines first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxtop.engine.editing.skeleton.overlay import Region

BODY_COST = 50  # below the 100 of one scope step: a nearer scope still wins
COMMENT_COST = 0.5
CONTENT_COST = 2
HEADER_BONUS = 0.5
SCOPE_COST = 100
DISTANCE_COST = 10
AFTER_FACTOR = 3  # text after the focus matters less than text before it
FAR = 1 << 30


@dataclass(slots=True, eq=False)
class TextNode:
    start: int
    end: int
    region: Region | None  # None: a gap
    depth: int
    parent: TextNode | None
    children: list[TextNode] = field(default_factory=list)
    kept: bool = False


def text_tree(root: Region) -> TextNode:
    """The dense tree: each region's children interleaved with the gaps between them."""

    def build(region: Region, depth: int, parent: TextNode | None) -> TextNode:
        node = TextNode(region.start, region.end, region, depth, parent)
        if region.children:
            position = region.start
            for child in region.children:
                if child.start > position:
                    node.children.append(TextNode(position, child.start, None, depth, node))
                node.children.append(build(child, depth + 1, node))
                position = child.end
            if region.end > position:
                node.children.append(TextNode(position, region.end, None, depth, node))
        return node

    return build(root, 0, None)


def regions_of(root: TextNode) -> list[TextNode]:
    """All region nodes below the root, in document order."""
    found: list[TextNode] = []
    stack = list(reversed(root.children))
    while stack:
        node = stack.pop()
        if node.region is not None:
            found.append(node)
            stack.extend(reversed(node.children))
    return found


def _touches(node: TextNode, focus: tuple[int, int]) -> bool:
    return node.start <= focus[1] and focus[0] <= node.end


def scope_distances(root: TextNode, focus: tuple[int, int] | None) -> dict[int, int]:
    """Per node (by id): the fewest levels from it, or an ancestor, down to a leaf at the focus."""
    if focus is None:
        return {}
    down: dict[int, int] = {}

    def measure(node: TextNode) -> int:
        if not node.children:
            value = 0 if _touches(node, focus) else FAR
        else:
            value = min(measure(child) for child in node.children) + 1
        down[id(node)] = value
        return value

    measure(root)
    distance: dict[int, int] = {}
    stack: list[tuple[TextNode, int]] = [(root, FAR)]
    while stack:
        node, inherited = stack.pop()
        value = min(inherited, down[id(node)])
        distance[id(node)] = value
        stack.extend((child, value) for child in node.children)
    return distance


def cost(
    node: TextNode,
    text: str,
    focus: tuple[int, int] | None,
    scopes: dict[int, int],
    functions: frozenset[str] = frozenset(),
) -> float:
    region = node.region
    if region is None:
        return 0.0
    if region.is_import:
        return 0.0
    value = float(node.depth)
    if region.is_comment:
        value += COMMENT_COST
    if region.in_body:  # statements: in the order they come
        value += BODY_COST
    elif region.children:
        value -= HEADER_BONUS
    elif (
        not region.is_comment
        and region.kind not in functions  # a one-expression function is still a signature
        and text.count("\n", region.start, region.end - 1) > 0
    ):
        value += CONTENT_COST
    text_length = len(text)
    if focus is not None:
        value += SCOPE_COST * min(scopes.get(id(node), FAR), FAR)
        if node.end < focus[0]:
            value += DISTANCE_COST * (focus[0] - node.end) / max(text_length, 1)
        elif node.start > focus[1]:
            value += DISTANCE_COST * AFTER_FACTOR * (node.start - focus[1]) / max(text_length, 1)
    return value


def by_cost(
    root: TextNode,
    text: str,
    focus: tuple[int, int] | None,
    functions: frozenset[str] = frozenset(),
) -> list[TextNode]:
    """The regions, cheapest first (ties: earlier among their siblings, then document order)."""
    scopes = scope_distances(root, focus)
    regions = regions_of(root)
    rank: dict[int, int] = {}  # position among the parent's regions
    for node in [root, *regions]:
        siblings = [child for child in node.children if child.region is not None]
        rank.update((id(child), index) for index, child in enumerate(siblings))
    # Ties: the first members of every class before the second ones, so that a budget running
    # out leaves each class its first signatures rather than the last classes none.
    return sorted(
        regions,
        key=lambda node: (cost(node, text, focus, scopes, functions), rank[id(node)], node.start),
    )

"""The render phase: every element gets a budget from the flex rules and renders its children.

Siblings are grouped by ``flexGrow`` (none first, then highest first). A group shares what is left
after earlier groups and after the ``flexReserve`` of later groups, split by ``flexBasis``;
TokenLimits whose share exceeds their ``max`` get exactly ``max``. An element's consumption
(literal text, plus base message tokens for messages) is capped at its budget and reduces what later
groups get. The result is the materialized tree (materialized.py), each node made as its element
is placed; nothing is pruned here.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

from ctxtop.engine.render.elements import MAX_PRIORITY, MESSAGE_ROLES, Child, Element, Sizing
from ctxtop.engine.render.jstext import WHITESPACE_RUN, js_number
from ctxtop.engine.render.materialized import (
    ALWAYS_BREAK,
    BREAK_IF_NOT_TEXT_SIBLING,
    FLAG_CHUNK,
    FLAG_EMPTY_ALTERNATE,
    FLAG_LEGACY,
    FLAG_PASS_PRIORITY,
    NO_BREAK,
    Branch,
    BreakpointPart,
    Container,
    DocumentPart,
    ImagePart,
    Message,
    Node,
    OpaquePart,
    TextPart,
)
from ctxtop.engine.render.textfit import RegexCursor, Steps, cursor_for, fit_steps, run_interleaved
from ctxtop.engine.render.tokenizers import Tokenizer, bare_message_tokens

INF = math.inf
CTOR_NAMES = {
    "system": "SystemMessage",
    "user": "UserMessage",
    "assistant": "AssistantMessage",
    "tool": "ToolMessage",
    "elem": "Elem",
    "chunk": "Chunk",
    "legacy": "LegacyPrioritization",
    "tokenlimit": "TokenLimit",
    "prioritizedlist": "PrioritizedList",
    "keepwith": "KeepWith",
    "ifempty": "IfEmpty",
    "logicalwrapper": "LogicalWrapper",
    "textchunk": "TextChunk",
    "image": "Image",
    "document": "Document",
    "expandable": "Expandable",
    "fill": "Fill",
    "echo": "Echo",
    "root": "Root",
}


# The flags a node gets from its element's kind (passPriority adds FLAG_PASS_PRIORITY).
KIND_FLAGS = {"legacy": FLAG_LEGACY, "chunk": FLAG_CHUNK, "ifempty": FLAG_EMPTY_ALTERNATE}
# Kinds whose render output is not just their children.
SPECIAL_OUTPUT = frozenset(
    {"textchunk", "fill", "echo", "expandable", "prioritizedlist", "ifempty"}
)

# The element path for error messages, innermost first, of element kinds; written out (with
# the library's constructor names) only when an error needs it.
PathChain = tuple[str, Any] | None


def _joined(path: PathChain) -> str:
    names: list[str] = []
    while path is not None:
        names.append(CTOR_NAMES.get(path[0], path[0]))
        path = path[1]
    return " > ".join(reversed(names))


class RenderError(Exception):
    """An error the library raises while rendering (reported as ``error`` with its type)."""

    def __init__(self, message: str, type_name: str = "Error") -> None:
        super().__init__(message)
        self.type_name = type_name


def js_floor(value: float) -> float:
    if isinstance(value, int):
        return value
    if value != value or math.isinf(value):
        return value
    return math.floor(value)


def js_div(a: float, b: float) -> float:
    if b == 0:
        if a == 0 or a != a:
            return math.nan
        return math.inf if a > 0 else -math.inf
    return a / b


class SizingContext:
    """The library's PromptSizingContext: consumption never reported above the budget."""

    __slots__ = ("budget", "used")

    def __init__(self, budget: float) -> None:
        self.budget = budget
        self.used: float = 0

    @property
    def consumed(self) -> float:
        return self.budget if self.used > self.budget else self.used

    @property
    def remaining(self) -> float:
        left = self.budget - self.used
        return left if left > 0 or left != left else 0


@dataclasses.dataclass
class Growable:
    node: Container
    element: Element
    initial_consume: float


@dataclasses.dataclass
class RenderPhaseResult:
    root: Container
    budgets: dict[str, float]
    expandable_calls: list[dict[str, Any]]
    token_limits: list[tuple[Any, int]]
    growables: list[Growable]
    created_ids: list[str]
    consumed: dict[str, float]


class RenderPhase:
    def __init__(self, tokenizer: Tokenizer, exact: bool, keep_with_ids: dict[str, int]) -> None:
        self.tokenizer = tokenizer
        self.exact = exact
        self.keep_with_ids = keep_with_ids
        self.next_node_id = 0
        self.budgets: dict[str, float] = {}
        self.expandable_calls: list[dict[str, Any]] = []
        self.token_limits: list[tuple[Any, int]] = []
        self.growables: list[Growable] = []
        self.created_ids: list[str] = []
        self.consumed: dict[str, float] = {}  # element id -> what its render used of its budget

    def new_node(self, element: Element, parent: Branch | None) -> Node:
        """The node ``element`` is laid out as, a child of ``parent`` (its children come as it
        renders): a message, an image or document part, or a container."""
        node_id = self.next_node_id
        self.next_node_id += 1
        kind = element.kind
        props = element.props
        priority = MAX_PRIORITY if element.priority is None else element.priority
        made: Node
        if kind in MESSAGE_ROLES:
            calls = props.get("tool_calls") if kind == "assistant" else None
            made = Message(
                parent,
                node_id,
                MESSAGE_ROLES[kind],
                props.get("name"),
                None if calls is None else [tool_call_dict(c, self.keep_with_ids) for c in calls],
                props.get("tool_call_id") if kind == "tool" else None,
                priority,
            )
        elif kind == "image":
            src = props.get("src") or ""
            made = ImagePart(parent, src, priority, props.get("detail"), props.get("mime_type"))
        elif kind == "document":
            made = DocumentPart(parent, props.get("data"), props.get("media_type"), priority)
        else:
            flags = KIND_FLAGS.get(kind, 0)
            if element.pass_priority:
                flags |= FLAG_PASS_PRIORITY
                if element.priority is None:
                    priority = 0
            container = Container(parent, node_id, CTOR_NAMES.get(kind, kind), priority, flags)
            if kind == "tokenlimit":
                self.token_limits.append((props.get("max"), node_id))
            elif kind == "keepwith":
                group = props["group"]
                container.keep_with_id = self.keep_with_ids.setdefault(
                    group, len(self.keep_with_ids)
                )
            made = container
        if element.id is not None:
            made.json_id = element.id
            self.created_ids.append(element.id)
        return made

    def count_text(self, text: str) -> int:
        return self.tokenizer.text_tokens(text)

    def run(self, root_children: list[Child], budget: float) -> RenderPhaseResult:
        root_element = Element("root", list(root_children))
        root = self.new_node(root_element, None)
        assert isinstance(root, Container)
        self._process_pieces(SizingContext(budget), [(root, root_element, ("root", None))])
        return RenderPhaseResult(
            root,
            self.budgets,
            self.expandable_calls,
            self.token_limits,
            self.growables,
            self.created_ids,
            self.consumed,
        )

    # -- flex allocation -------------------------------------------------------------------
    def _process_pieces(
        self, sizing: SizingContext, todo: list[tuple[Node, Element, PathChain]]
    ) -> None:
        if not todo:
            return
        if len(todo) == 1:  # one group, and nothing reserved by later ones
            node, element, path = todo[0]
            if element.flex_basis is not None or not _renders_children(element):
                self._render_pieces(sizing, todo, self._split(sizing, todo))
                return
            # the usual element: the whole share, its children as they are
            remaining = sizing.remaining
            # an integral share below 2**53 is its own floor (no float round trip to undo)
            whole = type(remaining) is int and remaining <= MAX_PRIORITY
            budget = remaining if whole else _equal_share(remaining, 1)
            if element.id is not None:
                self.budgets[element.id] = budget
            consumption = self._render_piece(budget, node, element, path, element.children)
            if element.id is not None:
                self.consumed[element.id] = consumption
            sizing.used += consumption
            return
        groups: dict[float, list[tuple[Node, Element, PathChain]]] = {}
        for entry in todo:
            element = entry[1]
            key = INF if element.flex_grow is None else element.flex_grow
            same = groups.get(key)
            if same is None:
                groups[key] = [entry]
            else:
                same.append(entry)
        ordered = (
            list(groups.values())
            if len(groups) == 1
            else [groups[key] for key in sorted(groups, key=lambda k: -k)]
        )
        last = len(ordered) - 1
        for group_index, group in enumerate(ordered):
            reserved: float = 0
            if group_index == last:  # no later group reserves anything
                budgets = self._split(sizing, group)
                self._render_pieces(sizing, group, budgets)
                continue
            for later in ordered[group_index + 1 :]:
                for _, element, _ in later:
                    reserve = element.flex_reserve
                    if not reserve:
                        continue
                    if isinstance(reserve, str):
                        reserved += js_floor(js_div(sizing.remaining, float(reserve[1:])))
                    else:
                        reserved += reserve
            sizing.used += reserved
            budgets = self._split(sizing, group)
            sizing.used -= reserved
            self._render_pieces(sizing, group, budgets)

    def _render_pieces(
        self,
        sizing: SizingContext,
        group: list[tuple[Node, Element, PathChain]],
        budgets: list[float],
    ) -> None:
        """Renders one flex group with its budgets; what each used is taken from ``sizing``."""
        record = self.budgets
        consumed = self.consumed
        for index, (_, element, _) in enumerate(group):
            if element.id is not None:
                record[element.id] = budgets[index]
        rendered = self._render_group(group, budgets)
        for index, (node, element, path) in enumerate(group):
            consumption = self._render_piece(budgets[index], node, element, path, rendered[index])
            if element.kind == "expandable":
                assert isinstance(node, Container)
                self.growables.append(Growable(node, element, consumption))
            if element.id is not None:
                consumed[element.id] = consumption
            sizing.used += consumption

    def _split(
        self, sizing: SizingContext, group: list[tuple[Node, Element, PathChain]]
    ) -> list[float]:
        """Each element's budget: shares by flexBasis, TokenLimits capped at their max."""
        remaining = sizing.remaining
        for _, element, _ in group:
            if element.flex_basis is not None or element.kind == "tokenlimit":
                break
        else:  # the common case: equal shares
            return [_equal_share(remaining, len(group))] * len(group)
        basis_sum: float = 0
        for _, element, _ in group:
            basis_sum += _basis(element)
        constant_limits: float = 0
        capped: list[bool] = []
        for _, element, _ in group:
            limit = element.props.get("max") if element.kind == "tokenlimit" else None
            if limit is None:
                capped.append(False)
                continue
            share = js_floor(remaining * js_div(_basis(element), basis_sum))
            if share < limit:
                capped.append(False)
                continue
            basis_sum -= _basis(element)
            constant_limits += limit
            capped.append(True)
        budgets: list[float] = []
        for index, (_, element, _) in enumerate(group):
            if capped[index]:
                budgets.append(element.props["max"])
            else:
                proportion = js_div(_basis(element), basis_sum)
                budgets.append(js_floor((remaining - constant_limits) * proportion))
        return budgets

    def _render_group(
        self, group: list[tuple[Node, Element, PathChain]], budgets: list[float]
    ) -> list[list[Child]]:
        """prepare() of the whole group (text fitting interleaved as in JS), then render()."""
        fits: dict[int, Steps] = {}
        shared_whitespace: RegexCursor | None = None
        for index, (_, element, path) in enumerate(group):
            if element.kind not in ("textchunk", "fill"):
                continue
            if element.kind == "textchunk" and not (
                element.props.get("break_on_whitespace") or element.props.get("break_on")
            ):
                continue  # a TextChunk that does not break is not fitted
            if shared_whitespace is None:
                shared_whitespace = RegexCursor(WHITESPACE_RUN, "/\\s+/g")
            if element.kind == "textchunk":
                steps = self._text_chunk_steps(element, budgets[index], shared_whitespace, path)
                if steps is not None:
                    fits[index] = steps
            elif element.kind == "fill":
                cursor = RegexCursor(WHITESPACE_RUN, "/\\s+/g")
                text = element.props["text"]
                fits[index] = fit_steps(self.count_text, budgets[index], cursor, text)
        if not fits:  # nothing fitted (the common case): most output their children
            return [
                element.children
                if element.kind not in SPECIAL_OUTPUT
                else self._render_output(element, budgets[index], None)
                for index, (_, element, _) in enumerate(group)
            ]
        fitted = dict(zip(fits, run_interleaved(list(fits.values())), strict=True))
        return [
            self._render_output(element, budgets[index], fitted.get(index))
            for index, (_, element, _) in enumerate(group)
        ]

    def _text_chunk_steps(
        self, element: Element, budget: float, shared: RegexCursor, path: PathChain
    ) -> Steps | None:
        props = element.props
        if props.get("break_on_whitespace"):
            cursor: str | RegexCursor = shared
        elif props.get("break_on"):
            try:
                cursor = cursor_for(props["break_on"])
            except ValueError as error:
                raise RenderError(f"{error} (at tsx element {_joined(path)})") from None
        else:
            return None
        text = ""
        for child in element.children:
            if isinstance(child, str):
                text += child
            elif child.kind == "br":
                text += "\n"
            elif child.kind not in ("opaque", "cacheBreakpoint"):
                raise RenderError(
                    "TextChunk children must be text literals or intrinsic attributes. "
                    f"(at tsx element {_joined(path)})"
                )
        return fit_steps(self.count_text, budget, cursor, text)

    def _render_output(self, element: Element, budget: float, fitted: str | None) -> list[Child]:
        kind = element.kind
        if kind not in SPECIAL_OUTPUT:
            return element.children  # only read: _flatten copies it if it holds fragments
        props = element.props
        if kind == "textchunk":
            if fitted is None:
                return element.children
            intrinsics: list[Child] = [
                c for c in element.children if isinstance(c, Element) and c.kind != "br"
            ]
            return [*intrinsics, fitted]
        if kind == "fill":
            return [fitted or ""]
        if kind == "echo":
            pad = props.get("pad") or ""
            label = props.get("label")
            shown = "undefined" if label is None else str(label)
            return [f"{pad + ' ' if pad else ''}{shown}={js_number(budget)}"]
        if kind == "expandable":
            self.expandable_calls.append({"id": element.id, "budget": budget})
            value: Callable[[Sizing], str] = props["value"]
            return [value(Sizing(budget, self.count_text))]
        if kind == "prioritizedlist":
            return _prioritized(element)
        if kind == "ifempty":
            alt = props.get("alt")
            alt_children = [] if alt is None else list(alt) if isinstance(alt, list) else [alt]
            return [
                Element("logicalwrapper", alt_children),
                Element("logicalwrapper", list(element.children), flex_grow=1),
            ]
        return element.children

    # -- one element's children ---------------------------------------------------------
    def _render_piece(
        self,
        budget: float,
        node: Node,
        element: Element,
        path: PathChain,
        output: list[Child],
    ) -> float:
        kind = element.kind
        tokenizer = self.tokenizer
        own_priority = MAX_PRIORITY if element.priority is None else element.priority
        # an image or document part keeps no children (they are laid out, then dropped)
        parent = node if isinstance(node, Branch) else None
        children = [] if parent is None else parent.children
        if kind == "textchunk" and len(output) == 1 and type(output[0]) is str:
            # the usual TextChunk, one text: what _text_chunk_children makes of it
            text = output[0]
            children.append(TextPart(parent, text, own_priority, ALWAYS_BREAK))
            tokens = tokenizer.text_tokens(text)
            return budget if tokens > budget else tokens  # SizingContext.consumed
        if len(output) == 1 and (isinstance(output[0], str) or output[0].kind != "fragment"):
            pieces = output  # one child, not a fragment (a message's, a wrapper's): as it is
        else:
            pieces = _flatten(output)
        used: float = 0
        if kind in ("system", "user", "assistant") or (self.exact and kind == "tool"):
            props = element.props
            if (
                props.get("name")
                or props.get("tool_calls") is not None
                or props.get("tool_call_id")
            ):
                assert isinstance(node, Message)
                used += tokenizer.message_tokens(_empty_message(element, node.tool_calls))
            else:  # _empty_message would hold the role alone
                used += bare_message_tokens(tokenizer, MESSAGE_ROLES[kind])
        text_tokens = tokenizer.text_tokens
        if kind == "textchunk":
            for piece in pieces:
                if isinstance(piece, str):
                    used += text_tokens(piece)
            self._text_chunk_children(parent, children, element, pieces, own_priority)
            return budget if used > budget else used  # SizingContext.consumed
        todo: list[tuple[Node, Element, PathChain]] = []
        for piece in pieces:
            if isinstance(piece, str):
                used += text_tokens(piece)
                # a text first among its siblings breaks the line unless a text comes before
                line_break = NO_BREAK if children else BREAK_IF_NOT_TEXT_SIBLING
                children.append(TextPart(parent, piece, own_priority, line_break))
            elif piece.kind in ("br", "opaque", "cacheBreakpoint"):
                self._intrinsic(parent, children, element, piece, own_priority, not children)
            else:
                child = self.new_node(piece, parent)
                children.append(child)
                todo.append((child, piece, (piece.kind, path)))
        child_sizing = SizingContext(budget)
        child_sizing.used = used
        self._process_pieces(child_sizing, todo)
        if kind == "ifempty" and parent is not None:
            # the alternative is kept only if the default renders nothing
            alternate, default = children
            parent.children = [alternate] if default.is_empty() else [default]
        return child_sizing.consumed

    def _text_chunk_children(
        self,
        parent: Branch | None,
        children: list[Node],
        element: Element,
        pieces: list[str | Element],
        priority: float,
    ) -> None:
        content: list[str] = []
        for piece in pieces:
            if isinstance(piece, str):
                content.append(piece)
            elif piece.kind == "br":
                content.append("\n")
            elif piece.kind in ("opaque", "cacheBreakpoint"):
                # intrinsics inside a TextChunk do not inherit its priority
                self._intrinsic(parent, children, element, piece, MAX_PRIORITY, False)
            else:
                raise RenderError("TextChunk cannot have extrinsic children!")
        children.append(TextPart(parent, "".join(content), priority, ALWAYS_BREAK))

    def _intrinsic(
        self,
        parent: Branch | None,
        children: list[Node],
        owner: Element,
        piece: Element,
        priority: float,
        first: bool,
    ) -> None:
        """``first``: nothing comes before it among its siblings (a line break then breaks
        the line unless a text comes before)."""
        inherited = priority if piece.priority is None else piece.priority
        props = piece.props
        if piece.kind == "br":
            line_break = BREAK_IF_NOT_TEXT_SIBLING if first else NO_BREAK
            children.append(TextPart(parent, "\n", inherited, line_break))
        elif piece.kind == "opaque":
            children.append(
                OpaquePart(parent, props.get("value"), props.get("token_usage"), inherited)
            )
        else:
            if owner.kind not in MESSAGE_ROLES:
                raise RenderError("Cache breakpoints may only be direct children of chat messages")
            children.append(BreakpointPart(parent, props.get("cache_type")))


def _equal_share(remaining: float, count: int) -> float:
    return js_floor(remaining * js_div(1, count))


def _renders_children(element: Element) -> bool:
    """Whether ``element`` renders its children as they are: not a TokenLimit (its share is
    capped), not fitted or generated text, not an Expandable (grown later)."""
    kind = element.kind
    if kind == "textchunk":
        props = element.props
        return not (props.get("break_on_whitespace") or props.get("break_on"))
    return kind not in SPECIAL_OUTPUT and kind != "tokenlimit"


def _basis(element: Element) -> float:
    return 1 if element.flex_basis is None else element.flex_basis


def _flatten(children: list[Child], into: list[str | Element] | None = None) -> list[str | Element]:
    if into is None:
        for child in children:
            if not isinstance(child, str) and child.kind == "fragment":
                break
        else:
            return children  # no fragment: the (fresh) output list as it is
    out: list[str | Element] = [] if into is None else into
    for child in children:
        if isinstance(child, str):
            out.append(child)
        elif child.kind == "fragment":
            _flatten(child.children, out)
        else:
            out.append(child)
    return out


def _prioritized(element: Element) -> list[Child]:
    base = 0 if element.priority is None else element.priority
    descending = bool(element.props.get("descending"))
    children = element.children
    out: list[Child] = []
    for index, child in enumerate(children):
        if child == "":
            continue
        priority = base - index if descending else base - len(children) + index
        if isinstance(child, str):
            out.append(Element("textchunk", [child], priority=priority))
        elif child.kind == "fragment":
            out.append(child)
        else:
            out.append(_with_priority(child, priority))
    return out


def _with_priority(element: Element, priority: float) -> Element:
    """``dataclasses.replace(element, priority=priority)`` (fields copied as they are, so
    children and props are shared) at a fraction of its cost: lists have thousands of items."""
    return Element(
        element.kind,
        element.children,
        element.id,
        priority,
        element.pass_priority,
        element.flex_grow,
        element.flex_basis,
        element.flex_reserve,
        element.props,
    )


def _empty_message(element: Element, calls: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The message ``element`` makes, without content (``calls``: its message's tool calls)."""
    props = element.props
    message: dict[str, Any] = {"role": MESSAGE_ROLES[element.kind], "content": []}
    if props.get("name"):
        message["name"] = props["name"]
    if calls is not None:
        message["toolCalls"] = calls
    if props.get("tool_call_id"):
        message["toolCallId"] = props["tool_call_id"]
    return message


def tool_call_dict(call: Any, keep_with_ids: dict[str, int]) -> dict[str, Any]:
    group = call.keep_with
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
        "keepWith": None if group is None else keep_with_ids.setdefault(group, len(keep_with_ids)),
    }

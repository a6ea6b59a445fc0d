"""The materialized prompt tree: containers, messages and content parts, with token counting.

Counting follows the library: a text's upper bound is its own tokens plus one if it may start a
new line; a message's count is the tokenizer's count of the whole message (cached until a child
is removed); containers add up their children. ``exact`` switches on the corrections listed in
docs/render.md (e.g. a message is recounted when its tool calls change).
"""

from __future__ import annotations

from typing import Any

from ctxtop.engine.render.jstext import is_blank
from ctxtop.engine.render.tokenizers import Tokenizer, bare_message_tokens

TEXT, IMAGE, DOCUMENT, OPAQUE, BREAKPOINT, CONTAINER, MESSAGE = range(7)
NO_BREAK, ALWAYS_BREAK, BREAK_IF_NOT_TEXT_SIBLING = 0, 1, 2
FLAG_LEGACY, FLAG_CHUNK, FLAG_PASS_PRIORITY, FLAG_EMPTY_ALTERNATE = 1, 2, 4, 8
PART_TEXT, PART_IMAGE, PART_OPAQUE, PART_BREAKPOINT, PART_DOCUMENT = 1, 0, 2, 3, 4

_IMAGE_PREFIXES = (
    ("/9j/", "image/jpeg"),
    ("iVBOR", "image/png"),
    ("R0lGOD", "image/gif"),
    ("UklGR", "image/webp"),
)


def encoded_image_url(src: str) -> str:
    for prefix, mime in _IMAGE_PREFIXES:
        if src.startswith(prefix):
            return f"data:{mime};base64,{src}"
    return src


class Counting:
    """What counting needs: the tokenizer and whether library quirks are corrected."""

    __slots__ = ("exact", "tokenizer")

    def __init__(self, tokenizer: Tokenizer, exact: bool) -> None:
        self.tokenizer = tokenizer
        self.exact = exact


class Node:
    """Common fields. ``kind`` selects behaviour; ``removed`` is set when detached by pruning."""

    __slots__ = ("cache_point", "json_id", "kind", "parent", "priority", "removed", "seq")

    def __init__(self, kind: int, parent: Branch | None, priority: float) -> None:
        self.kind = kind
        self.parent = parent
        self.priority = priority
        self.json_id: str | None = None
        self.cache_point: bool | None = None  # memo of "holds a cache breakpoint"
        self.removed = False
        self.seq: float = 0  # post-order number (prune.Pruner.index_tree)

    def is_empty(self) -> bool:
        return False

    def upper_bound(self, counting: Counting) -> float:
        return 0


class TextPart(Node):
    __slots__ = ("_blank", "_upper", "line_break", "text")

    def __init__(self, parent: Branch | None, text: str, priority: float, line_break: int) -> None:
        Node.__init__(self, TEXT, parent, priority)  # not super(): ~tens of thousands each render
        self.text = text
        self.line_break = line_break
        self._upper: int | None = None
        self._blank: bool | None = None

    def is_empty(self) -> bool:
        if self._blank is None:
            self._blank = is_blank(self.text)
        return self._blank

    def upper_bound(self, counting: Counting) -> float:
        if self._upper is None:
            extra = 1 if self.line_break != NO_BREAK else 0
            self._upper = counting.tokenizer.text_tokens(self.text) + extra
        return self._upper


class ImagePart(Node):
    __slots__ = ("detail", "mime_type", "src")

    def __init__(
        self, parent: Branch | None, src: str, priority: float, detail: Any, mime_type: Any
    ) -> None:
        super().__init__(IMAGE, parent, priority)
        self.src = src
        self.detail = detail
        self.mime_type = mime_type

    def image_url(self) -> dict[str, Any]:
        url: dict[str, Any] = {"url": encoded_image_url(self.src), "detail": self.detail}
        if self.mime_type:
            url["mediaType"] = self.mime_type
        return url

    def upper_bound(self, counting: Counting) -> float:
        return counting.tokenizer.part_tokens({"type": PART_IMAGE, "imageUrl": self.image_url()})


class DocumentPart(Node):
    __slots__ = ("data", "media_type")

    def __init__(self, parent: Branch | None, data: Any, media_type: Any, priority: float) -> None:
        super().__init__(DOCUMENT, parent, priority)
        self.data = data
        self.media_type = media_type

    def upper_bound(self, counting: Counting) -> float:
        part = {"type": PART_DOCUMENT, "documentData": {"data": self.data}}
        return counting.tokenizer.part_tokens(part)


class OpaquePart(Node):
    __slots__ = ("token_usage", "value")

    def __init__(self, parent: Branch | None, value: Any, token_usage: Any, priority: float):
        super().__init__(OPAQUE, parent, priority)
        self.value = value
        self.token_usage = token_usage

    def upper_bound(self, counting: Counting) -> float:
        usage = self.token_usage
        return usage if isinstance(usage, int | float) and usage == usage and usage else 0


class BreakpointPart(Node):
    __slots__ = ("cache_type",)

    def __init__(self, parent: Branch | None, cache_type: Any) -> None:
        super().__init__(BREAKPOINT, parent, MAX_PRIORITY_FLOAT)
        self.cache_type = cache_type


MAX_PRIORITY_FLOAT = 9007199254740991


class Branch(Node):
    """A node with children: a generic container or a message."""

    __slots__ = ("children", "node_id")

    def __init__(self, kind: int, parent: Branch | None, node_id: int, priority: float) -> None:
        Node.__init__(self, kind, parent, priority)
        self.node_id = node_id
        self.children: list[Node] = []

    def is_empty(self) -> bool:
        for child in self.children:  # noqa: SIM110 - a plain loop is ~2x faster than all()
            if not child.is_empty():
                return False
        return True

    def on_chunks_change(self) -> None:
        """This node's children changed: caches along the parent chain are out of date."""
        if self.parent is not None:
            self.parent.child_changed(self)

    def child_changed(self, child: Node) -> None:
        self.on_chunks_change()

    def swapped(self, old: Node, new: Node, exact: bool) -> None:
        """``old`` was replaced by ``new`` among the children (Expandable growth)."""

    def token_count(self, counting: Counting) -> float:
        raise NotImplementedError

    def base_tokens(self, counting: Counting) -> float:
        raise NotImplementedError

    def find(self, node_id: int) -> Branch | None:
        if self.node_id == node_id:
            return self
        for child in self.children:
            if isinstance(child, Branch):
                found = child.find(node_id)
                if found is not None:
                    return found
        return None

    def replace(self, node_id: int, new: Branch, exact: bool = False) -> Branch | None:
        """Replaces the descendant container ``node_id`` by ``new``; returns the old one."""
        children = self.children
        for index, child in enumerate(children):
            if isinstance(child, Branch):
                if child.node_id == node_id:
                    new.parent = child.parent
                    children[index] = new
                    self.swapped(child, new, exact)
                    return child
                inner = child.replace(node_id, new, exact)
                if inner is not None:
                    return inner
        return None


class Container(Branch):
    """A generic container. Its count is the sum over its children, as in the library.

    The library adds the children up on every call; the sums here are the same values, kept
    per child and refreshed only for children that changed since (``child_changed``).
    """

    __slots__ = (
        "_base_dirty",
        "_base_parts",
        "_base_sum",
        "_count_dirty",
        "_count_parts",
        "_count_sum",
        "flags",
        "keep_with_id",
        "name",
    )

    def __init__(
        self, parent: Branch | None, node_id: int, name: str | None, priority: float, flags: int
    ) -> None:
        # Node.__init__ and Branch's fields, not through Branch.__init__: ~10,000 each render
        Node.__init__(self, CONTAINER, parent, priority)
        self.node_id = node_id
        self.children: list[Node] = []
        self.name = name
        self.flags = flags
        self.keep_with_id: int | None = None
        self._count_sum: float = 0
        self._base_sum: float = 0
        # The sets of changed children are made with the sums (most containers are never
        # summed, or only once): each is read only while its parts are not None.
        self._count_parts: dict[Node, float] | None = None
        self._base_parts: dict[Node, float] | None = None
        self._count_dirty: set[Node]
        self._base_dirty: set[Node]

    def child_changed(self, child: Node) -> None:
        self.mark_dirty(child)
        self.on_chunks_change()

    def mark_dirty(self, child: Node) -> None:
        if self._count_parts is not None:
            self._count_dirty.add(child)
        if self._base_parts is not None:
            self._base_dirty.add(child)

    def child_detached(self, child: Node) -> None:
        if self._count_parts is not None:
            self._count_sum -= self._count_parts.pop(child, 0)
            self._count_dirty.discard(child)
        if self._base_parts is not None:
            self._base_sum -= self._base_parts.pop(child, 0)
            self._base_dirty.discard(child)

    def swapped(self, old: Node, new: Node, exact: bool) -> None:
        if self._count_parts is not None:
            _moved(self._count_parts, self._count_dirty, old, new)
        if self._base_parts is not None:
            _moved(self._base_parts, self._base_dirty, old, new)
        if exact:
            self.on_chunks_change()  # exact mode: the enclosing message's text changed
            return
        # The library re-adds container sums but keeps message caches (quirk 4).
        node: Branch = self
        parent = node.parent
        while isinstance(parent, Container):
            parent.mark_dirty(node)
            node = parent
            parent = node.parent

    def token_count(self, counting: Counting) -> float:
        if counting.exact and self.parent is not None and inside_message(self):
            return _exact_fragment_tokens(self, counting)
        parts = self._count_parts
        if parts is None:
            parts = self._count_parts = {}
            self._count_dirty = set()
            total: float = 0
            for child in self.children:
                if isinstance(child, Branch):
                    value = child.token_count(counting)
                else:
                    value = child.upper_bound(counting)
                parts[child] = value
                total += value
            self._count_sum = total
        elif self._count_dirty:
            for child in self._count_dirty:
                if child in parts and isinstance(child, Branch):
                    value = child.token_count(counting)
                    self._count_sum += value - parts[child]
                    parts[child] = value
            self._count_dirty.clear()
        return self._count_sum

    def upper_bound(self, counting: Counting) -> float:
        total: float = 0
        for child in self.children:
            total += child.upper_bound(counting)
        return total

    def base_tokens(self, counting: Counting) -> float:
        parts = self._base_parts
        if parts is None:
            parts = self._base_parts = {}
            self._base_dirty = set()
            total: float = 0
            for child in self.children:
                if isinstance(child, Branch):
                    value = child.base_tokens(counting)
                    parts[child] = value
                    total += value
            self._base_sum = total
        elif self._base_dirty:
            for child in self._base_dirty:
                if child in parts and isinstance(child, Branch):
                    value = child.base_tokens(counting)
                    self._base_sum += value - parts[child]
                    parts[child] = value
            self._base_dirty.clear()
        return self._base_sum


def _moved(parts: dict[Node, float], dirty: set[Node], old: Node, new: Node) -> None:
    """``old``'s summand is ``new``'s now, to be counted again."""
    if old in parts:
        parts[new] = parts.pop(old)
        dirty.discard(old)
        dirty.add(new)


class Message(Branch):
    __slots__ = (
        "_base",
        "_count",
        "_raw",
        "_text",
        "_upper",
        "name",
        "role",
        "tool_call_id",
        "tool_calls",
    )

    def __init__(
        self,
        parent: Branch | None,
        node_id: int,
        role: int,
        name: Any,
        tool_calls: list[dict[str, Any]] | None,
        tool_call_id: Any,
        priority: float,
    ) -> None:
        # Node.__init__ and Branch's fields, not through Branch.__init__: thousands each render
        Node.__init__(self, MESSAGE, parent, priority)
        self.node_id = node_id
        self.children: list[Node] = []
        self.role = role
        self.name = name
        self.tool_calls = tool_calls
        self.tool_call_id = tool_call_id
        self._count: float | None = None
        self._upper: float | None = None
        self._base: float | None = None
        self._text: list[Any] | None = None
        self._raw: dict[str, Any] | None = None

    def is_empty(self) -> bool:
        if self.tool_calls:
            return False
        for child in self.children:  # noqa: SIM110 - a plain loop is ~2x faster than all()
            if not child.is_empty():
                return False
        return True

    def on_chunks_change(self) -> None:
        self._count = None
        self._upper = None
        self._text = None
        self._raw = None
        if self.parent is not None:
            self.parent.child_changed(self)

    def replace(self, node_id: int, new: Branch, exact: bool = False) -> Branch | None:
        old = super().replace(node_id, new, exact)
        if old is not None:
            self.on_chunks_change()
        return old

    def set_tool_calls(self, calls: list[dict[str, Any]]) -> None:
        """Pruning dropped tool calls (the cached counts stay: see ``forget_counts``)."""
        self.tool_calls = calls
        self._raw = None

    def forget_counts(self) -> None:
        """Exact mode: tool calls changed, so every cached count is stale."""
        self._base = None
        self.on_chunks_change()

    def token_count(self, counting: Counting) -> float:
        if self._count is None:
            if counting.exact and self.is_empty():
                self._count = 0
            else:
                self._count = counting.tokenizer.message_tokens(self.to_raw())
        return self._count

    def upper_bound(self, counting: Counting) -> float:
        if self._upper is None:
            total = self.base_tokens(counting)
            for child in self.children:
                total += child.upper_bound(counting)
            self._upper = total
        return self._upper

    def base_tokens(self, counting: Counting) -> float:
        if self._base is None:
            raw = self.to_raw()
            if self.role != 3 and not self.name and not self.tool_calls:
                for part in raw["content"]:
                    if part["type"] != PART_TEXT:
                        break
                else:  # text only: with its text emptied, the message is its role alone
                    self._base = bare_message_tokens(counting.tokenizer, self.role)
                    return self._base
            content = []
            for part in raw["content"]:
                kind = part["type"]
                if kind == PART_TEXT:
                    content.append({**part, "text": ""})
                elif kind not in (PART_IMAGE, PART_DOCUMENT):
                    content.append(part)
            self._base = counting.tokenizer.message_tokens({**raw, "content": content})
        return self._base

    def text_parts(self) -> list[Any]:
        """Content in order: joined strings and non-text parts (the library's ``_text``)."""
        if self._text is None:
            self._text = assemble_content(self)
        return self._text

    def to_raw(self) -> dict[str, Any]:
        """The library's Raw message (kept until the content or the tool calls change; the
        callers only read it)."""
        raw = self._raw
        if raw is None:
            raw = self._raw = self._build_raw()
        return raw

    def _build_raw(self) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        for element in self.text_parts():
            if isinstance(element, str):
                content.append({"type": PART_TEXT, "text": element})
            elif element.kind == IMAGE:
                content.append({"type": PART_IMAGE, "imageUrl": element.image_url()})
            elif element.kind == DOCUMENT:
                data = {"data": element.data, "mediaType": element.media_type}
                content.append({"type": PART_DOCUMENT, "documentData": data})
            elif element.kind == OPAQUE:
                content.append({"type": PART_OPAQUE, "value": element.value})
            else:
                content.append({"type": PART_BREAKPOINT, "cacheType": element.cache_type})
        raw: dict[str, Any] = {"role": self.role, "content": content}
        role = self.role
        if role in (0, 1):
            if self.name:
                raw["name"] = self.name
        elif role == 2:
            if self.name:
                raw["name"] = self.name
            if self.tool_calls:
                raw["toolCalls"] = [
                    {"function": c["function"], "id": c["id"], "type": c["type"]}
                    for c in self.tool_calls
                ]
        else:
            raw["toolCallId"] = self.tool_call_id
        return raw


def inside_message(node: Node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.kind == MESSAGE:
            return True
        parent = parent.parent
    return False


def assemble_content(branch: Branch) -> list[Any]:
    """The content in order: adjacent texts joined (with the line breaks they ask for), and
    the non-text parts (of successive cache breakpoints, the last)."""
    result: list[Any] = []
    _assemble(branch, False, result)
    return result


def _assemble(branch: Branch, text_sibling: bool, result: list[Any]) -> None:
    """``text_sibling``: a text came right before ``branch`` among its siblings."""
    for child in branch.children:
        kind = child.kind
        if kind == TEXT:
            assert isinstance(child, TextPart)
            line_break = child.line_break
            if result and isinstance(result[-1], str):
                previous = result[-1]
                if (
                    line_break == ALWAYS_BREAK
                    or (line_break == BREAK_IF_NOT_TEXT_SIBLING and not text_sibling)
                ) and (previous and previous[-1] != "\n"):
                    previous += "\n"
                result[-1] = previous + child.text
            else:
                result.append(child.text)
            text_sibling = True
        elif kind == BREAKPOINT:
            if result and not isinstance(result[-1], str) and result[-1].kind == BREAKPOINT:
                result[-1] = child
            else:
                result.append(child)
        elif kind in (IMAGE, DOCUMENT, OPAQUE):
            result.append(child)
        else:
            assert isinstance(child, Branch)
            _assemble(child, text_sibling, result)
            text_sibling = False


def _exact_fragment_tokens(container: Container, counting: Counting) -> float:
    """Exact mode: what a container inside a message adds, counted as its assembled parts."""
    total: float = 0
    for element in assemble_content(container):
        if isinstance(element, str):
            total += counting.tokenizer.text_tokens(element)
        else:
            total += element.upper_bound(counting)
    return total


def messages_of(branch: Branch) -> list[Message]:
    """Non-empty messages in order; text outside a message is the library's error."""
    found: list[Message] = []
    _collect_messages(branch, found)
    return found


def _collect_messages(branch: Branch, found: list[Message]) -> None:
    for child in branch.children:
        if child.kind == CONTAINER:
            assert isinstance(child, Container)
            _collect_messages(child, found)
        elif child.kind == MESSAGE:
            assert isinstance(child, Message)
            if not child.is_empty():
                found.append(child)
        else:
            shown = child.text if isinstance(child, TextPart) else "undefined"
            raise TextOutsideMessageError(
                f'Cannot have a text node outside a ChatMessage. Text: "{shown}"'
            )


class TextOutsideMessageError(Exception):
    pass

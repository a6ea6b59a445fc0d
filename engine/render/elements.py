"""The prompt tree: elements with the props of @vscode/prompt-tsx, built from Python or loaded.

A tree is a list of children; a child is a plain string (a text literal) or an ``Element``.
Every element kind the renderer knows is listed in ``ELEMENT_KINDS`` (elements: they get an id,
a budget and flex props) or ``INTRINSIC_KINDS`` (line breaks, opaque parts, cache breakpoints).
The helper functions at the bottom build elements with keyword props, e.g.
``user(text_chunk("hello", priority=2), name="alice")``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Union

MAX_PRIORITY = 9007199254740991  # Number.MAX_SAFE_INTEGER: the priority of unprioritized nodes

ELEMENT_KINDS = frozenset(
    {
        "system",
        "user",
        "assistant",
        "tool",
        "elem",
        "chunk",
        "legacy",
        "tokenlimit",
        "prioritizedlist",
        "keepwith",
        "ifempty",
        "textchunk",
        "image",
        "document",
        "expandable",
        "fill",
        "echo",
    }
)
INTRINSIC_KINDS = frozenset({"br", "opaque", "cacheBreakpoint"})
MESSAGE_ROLES = {"system": 0, "user": 1, "assistant": 2, "tool": 3}
ROLE_NAMES = ("system", "user", "assistant", "tool")


@dataclass(frozen=True)
class Sizing:
    """What an element is told while rendering: its budget and how to count text."""

    token_budget: float
    count_tokens: Callable[[str], int]


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str = ""
    keep_with: str | None = None  # the keep-with group this call lives and dies with


@dataclass(slots=True)  # slots: made and read tens of thousands of times each render
class Element:
    """One node of the prompt tree. ``props`` holds the kind-specific props (see loader.py)."""

    kind: str
    children: list[Child] = field(default_factory=list)
    id: str | None = None
    priority: float | None = None
    pass_priority: bool = False
    flex_grow: float | None = None
    flex_basis: float | None = None
    flex_reserve: float | str | None = None
    props: dict[str, Any] = field(default_factory=dict)


Child = Union[str, Element]  # noqa: UP007 - a runtime alias used in isinstance-free code
BreakOn = Union[str, "re.Pattern[str]", "JsRegex"]


@dataclass(frozen=True)
class JsRegex:
    """A JavaScript regular expression (``breakOn``), kept with its source for error messages."""

    source: str
    flags: str
    pattern: re.Pattern[str]


def _element(kind: str, children: tuple[Child, ...], props: dict[str, Any]) -> Element:
    base = {
        key: props.pop(key)
        for key in ("id", "priority", "pass_priority", "flex_grow", "flex_basis", "flex_reserve")
        if key in props
    }
    return Element(kind, list(children), props=props, **base)


def system(*children: Child, **props: Any) -> Element:
    return _element("system", children, props)


def user(*children: Child, **props: Any) -> Element:
    return _element("user", children, props)


def assistant(*children: Child, tool_calls: list[ToolCall] | None = None, **props: Any) -> Element:
    if tool_calls is not None:
        props["tool_calls"] = tool_calls
    return _element("assistant", children, props)


def tool(*children: Child, tool_call_id: str, **props: Any) -> Element:
    return _element("tool", children, {**props, "tool_call_id": tool_call_id})


def elem(*children: Child, **props: Any) -> Element:
    return _element("elem", children, props)


def chunk(*children: Child, **props: Any) -> Element:
    return _element("chunk", children, props)


def legacy(*children: Child, **props: Any) -> Element:
    return _element("legacy", children, props)


def token_limit(*children: Child, max: float, **props: Any) -> Element:
    return _element("tokenlimit", children, {**props, "max": max})


def prioritized_list(*children: Child, descending: bool = False, **props: Any) -> Element:
    return _element("prioritizedlist", children, {**props, "descending": descending})


def keep_with(*children: Child, group: str, **props: Any) -> Element:
    return _element("keepwith", children, {**props, "group": group})


def if_empty(*children: Child, alt: list[Child] | None = None, **props: Any) -> Element:
    return _element("ifempty", children, {**props, "alt": alt or []})


def text_chunk(
    *children: Child,
    break_on: BreakOn | None = None,
    break_on_whitespace: bool = False,
    **props: Any,
) -> Element:
    return _element(
        "textchunk",
        children,
        {**props, "break_on": break_on, "break_on_whitespace": break_on_whitespace},
    )


def image(src: str, **props: Any) -> Element:
    return _element("image", (), {**props, "src": src})


def document(data: str, media_type: str, **props: Any) -> Element:
    return _element("document", (), {**props, "data": data, "media_type": media_type})


def expandable(value: Callable[[Sizing], str], **props: Any) -> Element:
    """An element re-rendered with the room left over: ``value(sizing)`` returns its text."""
    return _element("expandable", (), {**props, "value": value})


def br() -> Element:
    return Element("br")


def opaque(value: Any, token_usage: float | None = None, priority: float | None = None) -> Element:
    return Element("opaque", priority=priority, props={"value": value, "token_usage": token_usage})


def cache_breakpoint(cache_type: str | None = None) -> Element:
    return Element("cacheBreakpoint", props={"cache_type": cache_type})

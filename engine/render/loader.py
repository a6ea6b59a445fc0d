"""Prompt trees from the oracle's JSON format (ptsx-oracle FORMAT.md) or the same shape in YAML.

A document is a bare list (the root's children) or ``{"root": [...], "budget": N,
"tokenizer": "words", "description": ...}``. Nodes are strings or objects with ``type``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ctxtop.engine.errors import InputError
from ctxtop.engine.render.elements import (
    ELEMENT_KINDS,
    INTRINSIC_KINDS,
    MAX_PRIORITY,
    MESSAGE_ROLES,
    Child,
    Element,
    Sizing,
    ToolCall,
)
from ctxtop.engine.render.jstext import WHITESPACE_RUN, js_number, js_regex
from ctxtop.engine.render.textfit import text_below_budget
from ctxtop.engine.safety.input_limits import read_text
from ctxtop.engine.tokens.amount import token_amount

BASE_PROPS = {
    "priority": "priority",
    "passPriority": "pass_priority",
    "flexGrow": "flex_grow",
    "flexBasis": "flex_basis",
    "flexReserve": "flex_reserve",
}
BASE_NAMES = frozenset(BASE_PROPS)
# Kinds with props of their own (TextChunk's read in _node, the others in _kind_props).
KINDS_WITH_PROPS = frozenset(
    {
        "system",
        "user",
        "assistant",
        "tool",
        "tokenlimit",
        "prioritizedlist",
        "keepwith",
        "ifempty",
        "textchunk",
        "image",
        "document",
        "opaque",
        "cacheBreakpoint",
        "expandable",
        "fill",
        "echo",
    }
)


MAX_DEPTH = 100

# Where a node is, for error messages: (parent's Where or None, label, index), e.g.
# ((None, "root", 1), "elem", 0) is "root[1]/elem[0]"; the text is built only for an error.
Where = tuple[Any, str, int]


def _path(where: Where | str) -> str:
    if isinstance(where, str):
        return where
    steps: list[str] = []
    step: Where | None = where
    while step is not None:
        steps.append(f"{step[1]}[{step[2]}]")
        step = step[0]
    return "/".join(reversed(steps))


class TreeFormatError(ValueError):
    """A document that is not a valid prompt tree; the message names the node's path."""


@dataclass
class TreeDocument:
    root: list[Child]
    budget: int | None = None
    tokenizer: str | None = None
    description: str | None = None
    # TextChunk texts and tool call ids and arguments, in load order: the texts whose counts
    # count_memory keeps by their place in the tree (a tree loaded again lists the same ones).
    texts: list[str] = field(default_factory=list)


def parse_budget(value: Any) -> int:
    if value == "max":
        return MAX_PRIORITY
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise TreeFormatError(f"invalid budget {json.dumps(value)}")
    tokens = token_amount(value) if isinstance(value, str) else None
    if tokens is not None:
        return tokens  # 64000, 64k, 1.5M: as every other budget
    try:
        number = float(value)
    except ValueError:
        raise TreeFormatError(f"invalid budget {json.dumps(value)}") from None
    if number != int(number) or number < 0:
        raise TreeFormatError(f"invalid budget {json.dumps(value)}")
    return int(number)


def document_from_data(data: Any) -> TreeDocument:
    """A tree document from parsed JSON/YAML data; ids are assigned as the oracle does."""
    if isinstance(data, list):
        data = {"root": data}
    if not isinstance(data, dict) or not isinstance(data.get("root"), list):
        raise TreeFormatError('tree must be an array or an object with a "root" array')
    state = _LoadState()
    root = [
        _node(child, (None, "root", index), state, 0) for index, child in enumerate(data["root"])
    ]
    budget = data.get("budget")
    tokenizer = data.get("tokenizer")
    return TreeDocument(
        root=root,
        budget=None if budget is None else parse_budget(budget),
        tokenizer=None if tokenizer is None else str(tokenizer),
        description=data.get("description"),
        texts=state.texts,
    )


def load_document(path: str) -> TreeDocument:
    """Reads a .json, .yaml or .yml tree file; bad input is an InputError naming file and line."""
    text = read_text(path)
    data: Any
    if path.endswith((".yaml", ".yml")):
        from ctxtop.engine.yaml_text import parse_yaml

        data = parse_yaml(text, path)
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise InputError(path, f"invalid JSON ({error.msg})", error.lineno) from None
        except RecursionError:
            raise InputError(path, "invalid JSON (nested too deeply)") from None
    try:
        return document_from_data(data)
    except TreeFormatError as error:
        raise InputError(path, str(error)) from None
    except RecursionError:
        raise InputError(path, "the tree is nested too deeply") from None


def assign_missing_ids(children: list[Child]) -> None:
    """Gives elements built in Python without an id the oracle's ``#n`` (pre-order) id."""
    counter = _LoadState()

    def visit(child: Child) -> None:
        if isinstance(child, str):
            return
        if child.kind in ELEMENT_KINDS:
            child.id = counter.assign(child.id, child.kind)
        for grandchild in child.children:
            visit(grandchild)
        alt = child.props.get("alt") if child.kind == "ifempty" else None
        if isinstance(alt, list):
            for item in alt:
                visit(item)
        elif alt is not None:
            visit(alt)

    for child in children:
        visit(child)


class _LoadState:
    """What loading one document keeps: the ids given so far, the texts listed."""

    def __init__(self) -> None:
        self.next = 0
        self.seen: set[str] = set()
        self.texts: list[str] = []  # TreeDocument.texts

    def assign(self, given: Any, where: Where | str) -> str:
        if given is None:
            node_id = f"#{self.next}"
        else:  # a string id as it is, without a call (once per element)
            node_id = given if type(given) is str else _js_string(given)
        if node_id in self.seen:
            raise TreeFormatError(f'duplicate id "{node_id}" at {_path(where)}')
        self.seen.add(node_id)
        self.next += 1
        return node_id


def _js_string(value: Any) -> str:
    """JavaScript ``String(value)`` for the scalars a JSON id can be."""
    if type(value) is str:  # the usual id
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return js_number(value) if isinstance(value, float) else str(value)


def _node(raw: Any, where: Where, ids: _LoadState, depth: int) -> Child:
    """``depth``: how many elements enclose this one."""
    if isinstance(raw, str):
        return raw
    if depth >= MAX_DEPTH:
        # rendering recurses per level; a clear error instead of Python's recursion limit
        shown = _path(where)[:80]
        raise TreeFormatError(f"tree nested deeper than {MAX_DEPTH} levels at {shown}...")
    kind = raw.get("type") if isinstance(raw, dict) else None
    if not isinstance(kind, str):
        raise TreeFormatError(f"invalid node at {_path(where)}: {json.dumps(raw)}")
    if kind == "text":
        return str(raw.get("text", ""))
    element = Element(kind)
    if kind in ELEMENT_KINDS:
        element.id = ids.assign(raw.get("id"), where)
        if not BASE_NAMES.isdisjoint(raw):  # most nodes set none of them
            for json_name, attr in BASE_PROPS.items():
                value = raw.get(json_name)
                if value is not None:
                    setattr(element, attr, _base_prop(json_name, value, where))
    elif kind not in INTRINSIC_KINDS and kind != "fragment":
        raise TreeFormatError(f'unknown node type "{kind}" at {_path(where)}')
    raw_children = raw.get("children")
    if raw_children:
        if not isinstance(raw_children, list):
            raise TreeFormatError(f"children of {_path(where)} must be a list")
        inner = depth + 1
        element.children = [
            child if isinstance(child, str) else _node(child, (where, kind, index), ids, inner)
            for index, child in enumerate(raw_children)
        ]
    if kind == "textchunk":  # the most common kind: its props here, not in _kind_props
        text = raw.get("text")
        if text is not None:
            text = text if type(text) is str else str(text)
            element.children = [text]
            ids.texts.append(text)
        break_on = raw.get("breakOn")
        props = element.props
        props["break_on"] = None if break_on is None else _break_on(break_on, where)
        props["break_on_whitespace"] = bool(raw.get("breakOnWhitespace"))
    elif kind in KINDS_WITH_PROPS:
        _kind_props(element, raw, where, ids, depth)
    return element


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _base_prop(name: str, value: Any, node: Where) -> Any:
    """Checks a base prop's type (the library would compare a string priority as text)."""
    if name == "passPriority":
        if not isinstance(value, bool):
            raise TreeFormatError(f"passPriority at {_path(node)} must be true or false")
        return value
    if name == "flexReserve" and isinstance(value, str):
        divisor = value[1:] if value.startswith("/") else ""
        try:
            float(divisor)
        except ValueError:
            raise TreeFormatError(
                f'flexReserve at {_path(node)} must be a number or "/N"'
            ) from None
        return value
    if not _number(value):
        raise TreeFormatError(f"{name} at {_path(node)} must be a number, not {json.dumps(value)}")
    return value


def _kind_props(
    element: Element, raw: dict[str, Any], node: Where, ids: _LoadState, depth: int
) -> None:
    kind = element.kind
    props = element.props
    if kind in MESSAGE_ROLES:  # the most common kinds first: messages, then KeepWith
        if "name" in raw:
            props["name"] = raw["name"]
        if kind == "tool":
            props["tool_call_id"] = raw.get("toolCallId")
        elif kind == "assistant" and raw.get("toolCalls") is not None:
            _tool_calls(props, raw, ids)
    elif kind == "keepwith":
        props["group"] = str(raw.get("group"))
    elif kind == "tokenlimit":
        if raw.get("max") is not None and not _number(raw["max"]):
            raise TreeFormatError(f"max at {_path(node)} must be a number")
        props["max"] = raw.get("max")
    elif kind == "prioritizedlist":
        props["descending"] = bool(raw.get("descending"))
    elif kind == "ifempty":
        alt = raw.get("alt")
        if alt is None:
            props["alt"] = None
        elif isinstance(alt, list):
            fragment = Element("fragment")
            fragment.children = [
                _node(child, (node, "ifempty.alt", index), ids, depth + 1)
                for index, child in enumerate(alt)
            ]
            props["alt"] = fragment
        else:
            props["alt"] = _node(alt, (node, "ifempty.alt", 0), ids, depth + 1)
    elif kind == "image":
        props["src"] = raw.get("src")
        props["detail"] = raw.get("detail")
        props["mime_type"] = raw.get("mimeType")
    elif kind == "document":
        props["data"] = raw.get("data")
        props["media_type"] = raw.get("mediaType")
    elif kind == "opaque":
        if raw.get("tokenUsage") is not None and not _number(raw["tokenUsage"]):
            raise TreeFormatError(f"tokenUsage at {_path(node)} must be a number")
        props["value"] = raw.get("value")
        props["token_usage"] = raw.get("tokenUsage")
        if "priority" in raw:
            element.priority = raw["priority"]
    elif kind == "cacheBreakpoint":
        props["cache_type"] = raw.get("cacheType")
    elif kind == "expandable":
        props["value"] = _expandable_value(raw)
    elif kind == "fill":
        props["text"] = str(raw.get("text", ""))
    elif kind == "echo":
        props["label"] = raw.get("label", element.id)
        props["pad"] = raw.get("pad", "")


def _tool_calls(props: dict[str, Any], raw: dict[str, Any], ids: _LoadState) -> None:
    props["tool_calls"] = calls = [
        ToolCall(
            id=call.get("id"),
            name=call.get("name"),
            arguments=call.get("arguments", ""),
            keep_with=None if call.get("keepWith") is None else str(call["keepWith"]),
        )
        for call in raw["toolCalls"]
    ]
    texts = ids.texts
    for call in calls:
        if type(call.id) is str:
            texts.append(call.id)
        if type(call.arguments) is str:
            texts.append(call.arguments)


def _break_on(value: Any, node: Where) -> Any:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("regex"), str):
        try:
            return js_regex(value["regex"], value.get("flags", "g"))
        except (ValueError, Exception) as error:
            raise TreeFormatError(f"invalid breakOn regex at {_path(node)}: {error}") from None
    raise TreeFormatError(f"invalid breakOn {json.dumps(value)} at {_path(node)}")


def _expandable_value(raw: dict[str, Any]) -> Callable[[Sizing], str]:
    repeat = raw.get("repeat")
    text = str(raw.get("text", ""))
    if repeat:
        start = str(repeat.get("start", ""))
        unit = str(repeat.get("unit", ""))
        limit = int(repeat.get("max", 10000))

        def grow_by_units(sizing: Sizing) -> str:
            grown = start
            if not unit:
                return grown
            for _ in range(limit):
                if sizing.count_tokens(grown + unit) > sizing.token_budget:
                    break
                grown += unit
            return grown

        return grow_by_units

    def longest_prefix(sizing: Sizing) -> str:
        return text_below_budget(sizing.count_tokens, sizing.token_budget, WHITESPACE_RUN, text)

    return longest_prefix

"""The overlay tree: the regions of a file a skeleton may keep or elide, nested.

Built from the tree-sitter syntax tree when the language has a grammar, else from indentation
(a line followed by more-indented lines folds them). Regions cover whole lines where they can: a
region starting a line takes the line's indentation, and one ending a line takes the rest of it
when that is only ``;``, ``,``, ``:``, a comment or whitespace (so elision leaves no stray tokens).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ctxtop.engine.editing.skeleton.languages import Language

# Possessive blanks: two greedy runs of them around an optional ";" backtracked quadratically
# on a long blank run not followed by a newline (20 KB: 9 s).
_LINE_TAIL = re.compile(r"[ \t]*+[;,:]?[ \t]*+(//[^\n]*|#[^\n]*|/\*[^\n]*?\*/[ \t]*+)?(\r?\n|$)")
_CLOSING = re.compile(r"[\s]*[}\])][;,)\]}]*\s*(//.*)?")


@dataclass(slots=True)
class Region:
    start: int  # character offsets into the text
    end: int
    kind: str
    children: list[Region] = field(default_factory=list)
    is_import: bool = False
    is_comment: bool = False
    in_body: bool = False  # inside a function's body


def _char_offsets(text: str, data: bytes) -> list[int] | None:
    """Byte offset -> character offset (None when the text is ASCII and they agree)."""
    if len(data) == len(text):
        return None
    offsets = [0] * (len(data) + 1)
    position = 0
    for index, char in enumerate(text):
        width = len(char.encode("utf-8", "surrogatepass"))
        for step in range(width):
            offsets[position + step] = index
        position += width
    offsets[position] = len(text)
    return offsets


def _extended(text: str, start: int, end: int) -> tuple[int, int]:
    """``start..end`` widened to whole lines where only indentation / a trailer is outside."""
    line_start = text.rfind("\n", 0, start) + 1
    if text[line_start:start].strip() == "":
        start = line_start
    tail = _LINE_TAIL.match(text, end)
    if tail is not None:
        end = tail.end()
    return start, end


def _span(text: str, start: int, end: int, parent: Region) -> tuple[int, int] | None:
    """A region's extent: whole lines, inside its parent, after its elder sibling (None when
    that sibling already took it in, e.g. as a trailing comment)."""
    ext_start, ext_end = _extended(text, start, end)
    siblings = parent.children
    ext_start = max(ext_start, parent.start, siblings[-1].end if siblings else 0)
    ext_end = min(ext_end, parent.end)
    return (ext_start, ext_end) if ext_start < ext_end else None


def syntax_regions(text: str, language: Language, tree_root: Any) -> Region:
    """Regions from a tree-sitter tree (``tree_root`` parsed from ``text`` as UTF-8)."""
    data = text.encode("utf-8", "surrogatepass")
    offsets = _char_offsets(text, data)

    def char(byte: int) -> int:
        return byte if offsets is None else offsets[byte]

    root = Region(0, len(text), "root")
    containers = language.containers | {"ERROR"}
    attached: dict[int, int] = {}  # region id -> start of attributes waiting for their item
    pattern = re.compile(language.import_pattern) if language.import_pattern else None
    # (node, region it belongs to, inside a function body, parent's type, head start)
    stack: list[tuple[Any, Region, bool, str, int]] = [
        (child, root, False, "", -1) for child in reversed(tree_root.named_children)
    ]
    while stack:
        node, parent, in_function, parent_type, head = stack.pop()
        in_container = not parent_type or parent_type in containers
        start, end = char(node.start_byte), char(node.end_byte)
        line_start = text.rfind("\n", 0, start) + 1
        owner = parent
        if (
            in_container
            and start != head
            and node.type not in language.never_regions
            and text[line_start:start].strip() == ""
            and end > start
        ):
            span = _span(text, start, end, parent)
        else:
            span = None
        if span is not None:
            ext_start, ext_end = span
            if node.type in language.leading:  # joins the item after it
                attached.setdefault(id(parent), ext_start)
                continue
            ext_start = attached.pop(id(parent), ext_start)
            kind = node.type
            if node.type in ("decorated_definition", "export_statement", "template_declaration"):
                inner = node.named_children
                kind = inner[-1].type if inner else kind
            newline = text.find("\n", start, end)
            first_line = text[start : newline if newline >= 0 else end]
            region = Region(
                ext_start,
                ext_end,
                kind,
                is_import=node.type in language.imports
                or parent.is_import  # the lines of an import block
                or bool(pattern and parent is root and pattern.match(first_line)),
                is_comment=node.type in language.comments,
                in_body=in_function,
            )
            parent.children.append(region)
            owner, head = region, start
        # A body is a container right under a function (not its parameters or return type).
        in_body = in_function or (parent_type in language.functions and node.type in containers)
        for child in reversed(node.named_children):
            stack.append((child, owner, in_body, node.type, head))
    return root


def _indent(line: str) -> int:
    """Columns of leading whitespace (tabs to the next multiple of 4); -1 for a blank line."""
    stripped = line.lstrip(" \t")
    if not stripped.strip():
        return -1
    width = 0
    for char in line[: len(line) - len(stripped)]:
        width = width - width % 4 + 4 if char == "\t" else width + 1
    return width


def indentation_regions(text: str, offside: bool) -> Region:
    """Regions by indentation: each non-blank line, folded under the less-indented line above.

    A fold's first line (and, for bracket languages, a closing line at its indentation) stays
    with the fold; the lines in between are its children.
    """
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    indents = [_indent(line) for line in lines]

    def next_code(index: int, stop: int) -> int:
        while index < stop and indents[index] < 0:
            index += 1
        return index

    def build(first: int, stop: int) -> list[Region]:
        regions: list[Region] = []
        index = next_code(first, stop)
        while index < stop:
            level = indents[index]
            body = next_code(index + 1, stop)
            if body < stop and indents[body] > level:
                after = body
                while after < stop and (indents[after] < 0 or indents[after] > level):
                    after += 1
                last = after - 1
                while indents[last] < 0:
                    last -= 1
                end_line = last + 1
                closing = next_code(after, stop)
                if (
                    not offside
                    and closing < stop
                    and indents[closing] == level
                    and _CLOSING.fullmatch(lines[closing])
                ):
                    end_line = closing + 1
                region = Region(starts[index], starts[end_line], "fold")
                region.children = build(index + 1, last + 1)
                regions.append(region)
                index = next_code(end_line, stop)
            else:
                regions.append(Region(starts[index], starts[index + 1], "line"))
                index = next_code(index + 1, stop)
        return regions

    root = Region(0, len(text), "root")
    root.children = build(0, len(lines))
    return root

"""YAML parsing for ctxtop's data files (registry, profiles, settings, themes, prompt trees).

Uses libyaml's parser when PyYAML was built with it: the pure-Python one took about 0.2 s for the
model registry alone, a noticeable part of opening a session. Errors are ``yaml.YAMLError`` either
way, with the same line marks.

Bounded: a file is read only if it is a regular file under ``MAX_FILE_BYTES`` (a named pipe or
a device is refused, never waited on), and aliases may stand for at most ``MAX_ALIAS_NODES``
nodes in all: a few lines of nested aliases (a "billion laughs") otherwise expand to billions of
values in whatever walks the data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ctxtop.engine.errors import InputError
from ctxtop.engine.files import read_head

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_FILE_BYTES = 1 << 20  # settings, themes, profiles and the registry are a few KB each
MAX_ALIAS_NODES = 100_000


class AliasLimitError(yaml.YAMLError):
    """Aliases that expand past the limit, or an alias inside the node it names (at the
    parser's mark of that alias, as ``yaml.MarkedYAMLError`` has it)."""

    def __init__(self, problem: str, mark: Any) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = mark


def _check_aliases(text: str) -> None:
    """Walk the parser's events counting the nodes each alias stands for (an anchored node's
    size includes the aliases inside it): the count grows as the expansion would, the data
    never does."""
    sizes: dict[str | None, int] = {}
    open_nodes: list[list[Any]] = [[0, None]]  # [nodes so far, anchor] per open collection
    expanded = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent):
            size = sizes.get(event.anchor)
            if size is None:  # undefined anchors are the composer's error; this is recursion
                if any(anchor == event.anchor for _, anchor in open_nodes):
                    problem = f"alias *{event.anchor} is inside the node it names"
                    raise AliasLimitError(problem, event.start_mark)
                continue
            expanded += size
            if expanded > MAX_ALIAS_NODES:
                problem = f"aliases expand to over {MAX_ALIAS_NODES:,} values"
                raise AliasLimitError(problem, event.start_mark)
            open_nodes[-1][0] += size
        elif isinstance(event, yaml.ScalarEvent):
            if event.anchor is not None:
                sizes[event.anchor] = 1
            open_nodes[-1][0] += 1
        elif isinstance(event, yaml.CollectionStartEvent):
            open_nodes.append([1, event.anchor])
        elif isinstance(event, yaml.CollectionEndEvent):
            nodes, anchor = open_nodes.pop()
            if anchor is not None:
                sizes[anchor] = nodes
            open_nodes[-1][0] += nodes


def load_yaml(text: str) -> Any:
    """The YAML document in ``text`` (safe types only); ``yaml.YAMLError`` when it is not
    valid or its aliases expand past the limit."""
    if "*" in text:  # no alias without one: most files skip the second pass
        _check_aliases(text)
    return yaml.load(text, Loader=_Loader)


def parse_yaml(text: str, where: str) -> Any:
    """``load_yaml`` with its errors as one-line ``InputError``s naming ``where`` and the line."""
    try:
        return load_yaml(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(error, "problem", error)
        raise InputError(where, f"invalid YAML ({problem})", line) from None
    except RecursionError:
        raise InputError(where, "invalid YAML (nested too deeply)") from None


def read_yaml_file(path: Path, limit: int = MAX_FILE_BYTES, *, missing_ok: bool = False) -> Any:
    """The YAML document in the regular file ``path``, read without blocking and refused over
    ``limit`` bytes; ``InputError`` for anything unreadable or invalid (None for a missing file
    when ``missing_ok``)."""
    try:
        raw = read_head(path, limit + 1)
    except FileNotFoundError:
        if missing_ok:
            return None
        raise InputError(str(path), "no such file") from None
    except OSError as error:
        raise InputError(str(path), f"cannot read ({error.strerror or error})") from None
    if len(raw) > limit:
        raise InputError(str(path), f"over {limit:,} bytes, too large for a settings file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise InputError(str(path), "not valid UTF-8", line) from None
    return parse_yaml(text, str(path))

"""Skeletons: a file's outline (imports, signatures, class and function headers) with bodies
elided as ``...``, within a token budget.

After the document summarizer of VS Code Copilot Chat: regions from the syntax tree (or from
indentation when there is no grammar), kept cheapest first within ``4 x budget`` characters,
then, while the token count is over the budget, the budget shrinks by 15 % (at most 5 times).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from ctxtop.engine.editing.skeleton.cost import by_cost, text_tree
from ctxtop.engine.editing.skeleton.fill import fill
from ctxtop.engine.editing.skeleton.languages import Language, language_for_path
from ctxtop.engine.editing.skeleton.overlay import Region, indentation_regions, syntax_regions

__all__ = ["Language", "Skeleton", "language_for_path", "regions", "skeleton"]

CHARS_PER_TOKEN = 4
SHRINK = 0.85
MAX_SHRINKS = 5


@dataclass(frozen=True, slots=True)
class Skeleton:
    text: str
    tokens: int
    budget: int
    language: str
    shrinks: int  # how often the budget was cut by 15 %

    @property
    def fits(self) -> bool:
        return self.tokens <= self.budget


@cache
def _parser(grammar: str) -> Any:
    import tree_sitter_language_pack

    return tree_sitter_language_pack.get_parser(grammar)  # type: ignore[arg-type]


def regions(text: str, language: Language) -> Region:
    """The region tree of ``text``: from its grammar, or by indentation."""
    if language.grammar is None:
        return indentation_regions(text, language.offside)
    tree = _parser(language.grammar).parse(text.encode("utf-8", "surrogatepass"))
    return syntax_regions(text, language, tree.root_node)


def skeleton(
    text: str,
    language: Language,
    token_budget: int,
    count: Callable[[str], int],
    *,
    focus: tuple[int, int] | None = None,
    numbers: Sequence[int] | None = None,
) -> Skeleton:
    """The outline of ``text`` in at most ``token_budget`` tokens (by ``count``) when it can.

    ``focus`` (character offsets) is the region of interest, kept in most detail; ``numbers``
    (the original's line numbers) prefixes each kept line with its number.
    """
    root = text_tree(regions(text, language))
    order = by_cost(root, text, focus, language.functions)
    budget = float(token_budget)
    shrinks = 0
    while True:
        outline = fill(root, order, text, int(budget * CHARS_PER_TOKEN), numbers)
        tokens = count(outline)
        if tokens <= token_budget or shrinks == MAX_SHRINKS:
            return Skeleton(outline, tokens, token_budget, language.name, shrinks)
        budget *= SHRINK
        shrinks += 1

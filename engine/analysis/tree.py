"""The profile's prompt tree for the current context, and which nodes a full budget prunes.

Until the prompt renderer (engine/render) is plugged in, this lays the tree out with
prompt-tsx's pruning order only: when the content is over budget the prunable node with the
lowest priority goes first (ties: the earlier one). History rounds inside a PrioritizedList rank
by age (older = lower); tool results of the current rounds are cut to the profile's limit first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.analysis.snapshot import PromptNode, Pruned

# Copilot's marker between the kept head and tail of a cut tool result (approximate size).
TRUNCATION_MARKER_TOKENS = 12


@dataclass(frozen=True, slots=True)
class NodeInput:
    id: str
    section: str
    tokens: int
    priority: int | None
    order: int  # position in the prompt; breaks priority ties


def truncated(tokens: int, limit: int) -> int:
    """A tool result cut to ``limit`` tokens (head and tail kept around a marker)."""
    return tokens if tokens <= limit else limit + TRUNCATION_MARKER_TOKENS


def lay_out(
    nodes: Sequence[NodeInput], fixed_tokens: int, budget: int, window: int
) -> tuple[list[PromptNode], list[Pruned]]:
    """``fixed_tokens``: content outside any prunable node (never pruned)."""
    total = fixed_tokens + sum(node.tokens for node in nodes)
    prunable = sorted(
        (node for node in nodes if node.priority is not None),
        key=lambda node: (node.priority, node.order),
    )
    goes_below: dict[str, int] = {}
    before = 0
    for node in prunable:
        # With the lower-ranked nodes gone, this one goes once the budget is under what is left.
        goes_below[node.id] = total - before
        before += node.tokens
    laid: list[PromptNode] = []
    pruned: list[Pruned] = []
    removed = 0
    for node in prunable:
        if total - removed > budget:
            pruned.append(
                Pruned(node.id, node.tokens, f"over budget: lowest priority ({node.priority})")
            )
            removed += node.tokens
    for node in nodes:
        threshold = goes_below.get(node.id)
        laid.append(
            PromptNode(
                id=node.id,
                section=node.section,
                tokens=node.tokens,
                priority=node.priority,
                prunable=threshold is not None,
                pruned_at_budget=threshold,
                # As the context grows, the node goes when the content reaches the budget plus
                # the lower-ranked nodes pruned before it.
                pruned_at_fill=(
                    round((budget + total - threshold) / window, 4)
                    if threshold is not None and window
                    else None
                ),
            )
        )
    return laid, pruned

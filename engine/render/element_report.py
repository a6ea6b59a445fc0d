"""The render report for the dashboard: per element its budget, tokens, and why it was pruned.

Rows follow the tree's order (pre-order over elements with an id). ``tokens_before`` is what the
element counted before any pruning, ``tokens`` what is left of it in the result (messages: the
tokenizer's count of the whole message; other elements: their share, line breaks included).
``reason`` is ``priority``, ``TokenLimit N``, ``keep-with``, ``empty parent`` or
``inside <id>`` (removed with an ancestor). ``consumed`` is what the element's render used of
its budget (capped at it), which is what later flex groups lose. Cache breakpoints list the ids
they protect.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ctxtop.engine.render.elements import ROLE_NAMES
from ctxtop.engine.render.materialized import (
    BREAKPOINT,
    IMAGE,
    Branch,
    Container,
    Counting,
    Message,
    Node,
)
from ctxtop.engine.render.renderer import ID_KINDS, RenderResult
from ctxtop.engine.render.tokenizers import get_tokenizer


@dataclass
class ElementRow:
    id: str
    kind: str
    depth: int
    budget: float | None
    consumed: float | None  # what its render used of the budget (text, message frame, children)
    tokens_before: float
    tokens: float
    pruned: bool
    reason: str | None


@dataclass
class BreakpointRow:
    message: str | None
    cache_type: str | None
    protects: list[str]


@dataclass
class RenderReport:
    budget: int
    token_count: float | None
    fits: bool
    mode: str
    tokenizer: str
    elements: list[ElementRow] = field(default_factory=list)
    cache_breakpoints: list[BreakpointRow] = field(default_factory=list)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _kind(node: Node) -> str:
    if isinstance(node, Message):
        return ROLE_NAMES[node.role] if 0 <= node.role < 4 else str(node.role)
    if isinstance(node, Container):
        return node.name or "(expanded)"
    return "image" if node.kind == IMAGE else "document"


def _tokens(node: Node, counting: Counting) -> float:
    if isinstance(node, Branch):
        return node.token_count(counting)
    return node.upper_bound(counting)


def build_report(result: RenderResult) -> RenderReport:
    counting = Counting(get_tokenizer(result.tokenizer), result.mode == "exact")
    report = RenderReport(
        budget=result.budget,
        token_count=result.token_count,
        fits=result.error is None and (result.token_count or 0) <= result.budget,
        mode=result.mode,
        tokenizer=result.tokenizer,
        error=None if result.error is None else f"{result.error.type}: {result.error.message}",
    )
    if result.initial_tree_factory is None:
        return report
    # Nothing removed or grown: the tree before pruning is the final one (counted already).
    unchanged = result.final_tree is not None and not result.removals
    unchanged = unchanged and not result.expandable_calls
    initial = result.final_tree if unchanged else result.initial_tree_factory()
    assert initial is not None
    final_tokens: dict[str, float] = {}
    if result.final_tree is not None:
        for node, _ in _walk(result.final_tree, 0):
            if node.json_id is not None and node.kind in ID_KINDS:
                final_tokens[node.json_id] = _tokens(node, counting)
    reasons: dict[str, str] = {}
    for node, why, limit in result.removals:
        label = limit if (limit is not None and why == "priority") else why
        _mark_removed(node, label, reasons)
    for node, depth in _walk(initial, 0):
        if node.json_id is None or node.kind not in ID_KINDS:
            continue
        gone = node.json_id not in final_tokens and result.final_tree is not None
        report.elements.append(
            ElementRow(
                id=node.json_id,
                kind=_kind(node),
                depth=depth,
                budget=result.budgets.get(node.json_id),
                consumed=result.consumed.get(node.json_id),
                tokens_before=_tokens(node, counting),
                tokens=final_tokens.get(node.json_id, 0),
                pruned=gone,
                reason=reasons.get(node.json_id) if gone else None,
            )
        )
    report.cache_breakpoints = _breakpoints(initial)
    return report


def _mark_removed(node: Node, reason: str, reasons: dict[str, str]) -> None:
    if node.json_id is not None:
        reasons.setdefault(node.json_id, reason)
    if isinstance(node, Branch):
        inner = f"inside {node.json_id}" if node.json_id is not None else reason
        for child in node.children:
            _mark_removed(child, inner, reasons)


def _walk(node: Node, depth: int) -> list[tuple[Node, int]]:
    out: list[tuple[Node, int]] = []
    stack: list[tuple[Node, int]] = [(node, depth)]
    while stack:
        current, level = stack.pop()
        out.append((current, level))
        if isinstance(current, Branch):
            step = 1 if current.json_id is not None else 0
            stack.extend((child, level + step) for child in reversed(current.children))
    return out


def _breakpoints(root: Node) -> list[BreakpointRow]:
    """Each breakpoint protects the elements wholly before it (pruning never reaches them while
    a later breakpoint exists; the last one protects the most)."""
    order = [node for node, _ in _walk(root, 0)]
    ends: dict[int, int] = {}  # id(node) -> position just past its subtree
    for position in range(len(order) - 1, -1, -1):
        node = order[position]
        end = position + 1
        if isinstance(node, Branch) and node.children:
            end = ends[id(node.children[-1])]
        ends[id(node)] = end
    rows: list[BreakpointRow] = []
    for position, node in enumerate(order):
        if node.kind != BREAKPOINT:
            continue
        protects = [
            before.json_id
            for before in order[:position]
            if before.json_id is not None
            and before.kind in ID_KINDS
            and ends[id(before)] <= position
        ]
        message = node.parent
        if message is not None and message.json_id is not None:
            before = message.children[: message.children.index(node)]
            if any(not child.is_empty() for child in before):
                protects.append(f"{message.json_id} (up to the breakpoint)")
        rows.append(
            BreakpointRow(
                message=None if message is None else message.json_id,
                cache_type=getattr(node, "cache_type", None),
                protects=protects,
            )
        )
    return rows


def report_table(report: RenderReport) -> str:
    """A readable table of the report."""
    lines = [
        f"{'element':<28} {'kind':<18} {'budget':>10} {'used':>8} {'before':>8} {'after':>8}  "
        "status",
    ]
    for row in report.elements:
        name = ("  " * row.depth + row.id)[:28]
        budget = "" if row.budget is None else _budget(row.budget)
        used = "" if row.consumed is None else _short(row.consumed)
        status = "kept"
        if report.error:
            status = "not sent"
        elif row.pruned:
            status = f"pruned ({row.reason})"
        lines.append(
            f"{name:<28} {row.kind[:18]:<18} {budget:>10} {used:>8} "
            f"{_short(row.tokens_before):>8} {_short(row.tokens):>8}  {status}"
        )
    for bp in report.cache_breakpoints:
        kept = ", ".join(bp.protects) or "nothing"
        lines.append(f"cache breakpoint in {bp.message}: protects {kept}")
    if report.error:
        lines.append(f"error: {report.error}")
    else:
        total = _short(report.token_count or 0)
        how = f"{report.tokenizer}, {report.mode} mode"
        if report.budget >= NO_LIMIT:
            lines.append(f"total {total} tokens (no limit; {how})")
        else:
            verdict = "fits" if report.fits else "OVER BUDGET"
            lines.append(f"total {total} of {_short(report.budget)} tokens ({verdict}; {how})")
    return "\n".join(lines)


# Without a budget prompt-tsx renders to "max" (Number.MAX_SAFE_INTEGER) and each element
# gets its share of that: 2^51 tokens and the like. No model's window comes near this, and no
# element has it unless it came from "max": such a budget is no limit.
NO_LIMIT = 2**40


def _budget(value: float) -> str:
    return "no limit" if value >= NO_LIMIT else _short(value)


def _short(value: float) -> str:
    if isinstance(value, float) and value == int(value):
        return str(int(value))
    return str(value)

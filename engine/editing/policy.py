"""Editing policy and plan: which tool results to clear, in which order, and what replaces them."""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.editing.cycles import Scan, ToolUse
from engine.editing.placeholder import MARK, clear_input, placeholder
from engine.errors import CtxtopError

DEFAULT_EXCLUDE = ("*memory*",)  # memory tools are never touched unless asked
ORDERS = ("oldest", "largest", "relevance")
MODES = ("placeholder", "skeleton")


@dataclass(frozen=True, slots=True)
class Policy:
    keep_cycles: int = 3  # the last N cycles stay whole
    keep_tool_uses: int = 0  # the last N tool uses stay whole
    min_tokens: int = 0  # clear nothing unless at least this many tokens go
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE  # tool names (case-insensitive, globs allowed)
    clear_inputs: bool = False  # also clear long strings in the calls' inputs
    order: str = "oldest"
    target_tokens: int | None = None  # stop once this many tokens are cleared (None: all)
    mode: str = "placeholder"

    def excludes(self, tool: str) -> bool:
        name = tool.lower()
        return any(fnmatch.fnmatchcase(name, pattern.lower()) for pattern in self.exclude)

    def as_dict(self) -> dict[str, Any]:
        return {
            "keep_cycles": self.keep_cycles,
            "keep_tool_uses": self.keep_tool_uses,
            "min_tokens": self.min_tokens,
            "exclude": list(self.exclude),
            "clear_inputs": self.clear_inputs,
            "order": self.order,
            "target_tokens": self.target_tokens,
            "mode": self.mode,
        }


@dataclass(slots=True)
class Change:
    use: ToolUse
    tokens_before: int  # result (+ input when cleared) before
    tokens_after: int
    new_result: str
    new_input: Any = None
    input_changed: bool = False

    @property
    def saved(self) -> int:
        return self.tokens_before - self.tokens_after


@dataclass(slots=True)
class Plan:
    changes: list[Change] = field(default_factory=list)
    skipped_below_minimum: int = 0  # tokens the plan would have cleared under min_tokens

    @property
    def saved(self) -> int:
        return sum(change.saved for change in self.changes)


Count = Callable[[str], int]


def _input_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def eligible(scan: Scan, policy: Policy) -> list[ToolUse]:
    """Tool uses the policy allows to clear: finished, not excluded, outside the kept tail."""
    first_kept_cycle = scan.cycles - policy.keep_cycles + 1 if policy.keep_cycles > 0 else None
    first_kept_use = len(scan.uses) - policy.keep_tool_uses
    in_progress = scan.in_progress_cycle()
    chosen: list[ToolUse] = []
    for use in scan.uses:
        if use.result is None or MARK in use.result:
            continue
        if first_kept_cycle is not None and use.cycle >= first_kept_cycle:
            continue
        if in_progress is not None and use.cycle == in_progress:
            continue
        if use.order >= first_kept_use or policy.excludes(use.name):
            continue
        chosen.append(use)
    return chosen


def make_plan(
    scan: Scan,
    policy: Policy,
    count: Count,
    relevance: dict[str, float] | None = None,
) -> Plan:
    if policy.mode not in MODES:
        raise CtxtopError(f"unknown mode {policy.mode!r}; use {' or '.join(MODES)}")
    if policy.mode == "skeleton":
        raise CtxtopError("--mode skeleton is not available yet (tree-sitter skeletons pending)")
    if policy.order not in ORDERS:
        raise CtxtopError(f"unknown order {policy.order!r}; use {', '.join(ORDERS)}")
    if policy.order == "relevance" and relevance is None:
        raise CtxtopError(
            "--order relevance is not available yet: it needs the relevance analysis "
            "(engine.analysis); use --order oldest or largest"
        )
    changes: list[Change] = []
    for use in eligible(scan, policy):
        result = use.result or ""
        before = count(result)
        new_result = placeholder(use.name, use.input, before)
        after = count(new_result)
        change = Change(use, before, after, new_result)
        if policy.clear_inputs:
            parsed = use.input
            if isinstance(parsed, str):
                try:
                    parsed = json.loads(parsed)
                except (json.JSONDecodeError, RecursionError):
                    parsed = {"input": parsed}
            new_input, changed = clear_input(parsed)
            if changed:
                change.new_input, change.input_changed = new_input, True
                change.tokens_before += count(_input_text(use.input))
                change.tokens_after += count(_input_text(new_input))
        if change.saved > 0:
            changes.append(change)
    if policy.order == "largest":
        changes.sort(key=lambda c: (-c.saved, c.use.order))
    elif policy.order == "relevance" and relevance is not None:
        changes.sort(key=lambda c: (relevance.get(c.use.call_id, 0.0), c.use.order))
    if policy.target_tokens is not None:
        taken: list[Change] = []
        total = 0
        for change in changes:
            if total >= policy.target_tokens:
                break
            taken.append(change)
            total += change.saved
        changes = taken
    plan = Plan(changes)
    if plan.saved < policy.min_tokens:
        return Plan([], skipped_below_minimum=plan.saved)
    return plan

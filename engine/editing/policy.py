"""Editing policy and plan: which tool results to clear, in which order, and what replaces them."""

from __future__ import annotations

import fnmatch
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ctxtop.engine.editing.offload import Offloader
from ctxtop.engine.editing.outline import outline_result
from ctxtop.engine.editing.placeholder import (
    MARK,
    clear_input,
    cleared_by_ctxtop,
    how_to_get_back,
    placeholder,
)
from ctxtop.engine.editing.pools import DEFAULT_FILL, Target
from ctxtop.engine.editing.size_limit import Limit
from ctxtop.engine.editing.truncate import truncate
from ctxtop.engine.editing.turns import Scan, ToolUse
from ctxtop.engine.errors import CtxtopError

DEFAULT_EXCLUDE = ("*memory*",)  # memory tools are never touched unless asked
ORDERS = ("oldest", "largest", "relevance")
MODES = ("placeholder", "skeleton", "none")
DEFAULT_SKELETON_BUDGET = Limit(25, percent=True)  # of each result's tokens
DEFAULT_TRUNCATE_AT = Limit(50, percent=True)  # of the model's prompt budget

# The two ways to say which old results stay. "tool-uses" (the default, as Anthropic's
# clear_tool_uses): the last N tool uses, whatever turn they are in, so one long agentic turn
# is edited too. "turns" (CodeCompanion's cycles): the last N user turns whole.
TOOL_USES = "tool-uses"
TURNS = "turns"
POLICIES = (TOOL_USES, TURNS)
DEFAULT_KEEP = 3  # what either policy keeps unless told (Anthropic's and CodeCompanion's 3)
# A result is cleared only if that saves at least this many tokens: less (a TodoWrite's
# "Todos have been modified", a short listing) is not worth the cache rewrite it costs.
MIN_RESULT_SAVING = 10


def last(count: int, unit: str) -> str:
    """``the last 3 turns``, ``the last turn``, ``no turn`` (0)."""
    if count == 0:
        return f"no {unit}"
    return f"the last {unit}" if count == 1 else f"the last {count} {unit}s"


@dataclass(frozen=True, slots=True)
class Policy:
    # None: the policy's own default (DEFAULT_KEEP for its unit, else 0). Given alone,
    # keep_turns picks the turns policy, so an old `Policy(keep_turns=1)` means what it meant.
    keep_turns: int | None = None  # the last N turns stay whole
    keep_tool_uses: int | None = None  # the last N tool uses stay whole
    min_tokens: int = 0  # clear nothing unless at least this many tokens go (clear_at_least)
    min_result_tokens: int = MIN_RESULT_SAVING  # leave a result whose clearing saves fewer
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE  # tool names (case-insensitive, globs allowed)
    clear_inputs: bool = False  # also clear long strings in the calls' inputs
    order: str = "oldest"
    target_tokens: int | None = None  # stop once this many tokens are cleared (None: all)
    mode: str = "placeholder"  # what replaces an old result; "none": old results stay
    skeleton_budget: Limit = DEFAULT_SKELETON_BUDGET  # size of an outline (skeleton mode)
    truncate_at: Limit | None = None  # cap every finished result at this size (None: no cap)
    offload: bool = False  # a result over the cap goes to a file instead of being cut
    kind: str | None = None  # TOOL_USES or TURNS; None: TURNS if only keep_turns is given
    # Clear down to this whole context, keeping results through the budget pools (pools.py).
    target: Target | None = None
    fill: str = DEFAULT_FILL  # the optional pool's fill mode

    @property
    def name(self) -> str:
        """The policy in effect: ``tool-uses`` or ``turns``."""
        if self.kind is not None:
            return self.kind
        only_turns = self.keep_turns is not None and self.keep_tool_uses is None
        return TURNS if only_turns else TOOL_USES

    @property
    def kept_tool_uses(self) -> int:
        if self.keep_tool_uses is not None:
            return self.keep_tool_uses
        return DEFAULT_KEEP if self.name == TOOL_USES else 0

    @property
    def kept_turns(self) -> int:
        if self.keep_turns is not None:
            return self.keep_turns
        return DEFAULT_KEEP if self.name == TURNS else 0

    @property
    def keeps_turn_in_progress(self) -> bool:
        """A turn still in progress stays whole under the turns policy (a turn is never cut);
        under tool-uses only its unfinished calls stay, as Anthropic's clearing does."""
        return self.name == TURNS

    def summary(self) -> str:
        """The policy in words: ``tool-uses: keep the last 3 tool uses``."""
        kept = [
            (self.kept_tool_uses, last(self.kept_tool_uses, "tool use")),
            (self.kept_turns, last(self.kept_turns, "turn") + " whole"),
        ]
        if self.name == TURNS:
            kept.reverse()
        words = [kept[0][1]] + [text for count, text in kept[1:] if count]
        text = f"{self.name}: keep {' and '.join(words)}"
        if self.min_tokens:
            text += f", if at least {self.min_tokens:,} tokens go"
        return text

    def excludes(self, tool: str) -> bool:
        name = tool.lower()
        return any(fnmatch.fnmatchcase(name, pattern.lower()) for pattern in self.exclude)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "summary": self.summary(),
            "keep_turns": self.kept_turns,
            "keep_tool_uses": self.kept_tool_uses,
            "min_tokens": self.min_tokens,
            "min_result_tokens": self.min_result_tokens,
            "exclude": list(self.exclude),
            "clear_inputs": self.clear_inputs,
            "order": self.order,
            "target_tokens": self.target_tokens,
            "mode": self.mode,
            "skeleton_budget": str(self.skeleton_budget),
            "truncate_at": str(self.truncate_at) if self.truncate_at else None,
            "offload": self.offload,
            "target": str(self.target) if self.target is not None else None,
            "fill": self.fill,
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
    turns = policy.kept_turns
    first_kept_turn = scan.turns - turns + 1 if turns > 0 else None
    first_kept_use = len(scan.uses) - policy.kept_tool_uses
    in_progress = scan.in_progress_turn() if policy.keeps_turn_in_progress else None
    chosen: list[ToolUse] = []
    for use in scan.uses:
        if use.result is None or MARK in use.result:
            continue
        if first_kept_turn is not None and use.turn >= first_kept_turn:
            continue
        if in_progress is not None and use.turn == in_progress:
            continue
        if use.order >= first_kept_use or policy.excludes(use.name):
            continue
        chosen.append(use)
    return chosen


def _replacement(use: ToolUse, result: str, tokens: int, policy: Policy, count: Count) -> str:
    """What stands in for an old result: its outline (skeleton mode, file reads) or the
    placeholder."""
    if policy.mode == "skeleton":
        outline = outline_result(use.name, use.input, result, policy.skeleton_budget, count, tokens)
        if outline is not None:
            return outline
    return placeholder(use.name, use.input, tokens)


def capped(
    scan: Scan,
    policy: Policy,
    count: Count,
    limit: int,
    offloader: Offloader | None,
    changed: set[str],
) -> list[Change]:
    """Every finished result over ``limit`` tokens (any turn but one in progress, not an
    excluded tool, not already changed): cut to its ends, or moved to a file."""
    in_progress = scan.in_progress_turn()
    caps: list[Change] = []
    for use in scan.uses:
        result = use.result
        if result is None or use.call_id in changed or policy.excludes(use.name):
            continue
        if in_progress is not None and use.turn == in_progress:
            continue
        if cleared_by_ctxtop(result):
            continue
        tokens = count(result)
        if tokens <= limit:
            continue
        if offloader is not None:
            new_result = offloader.pointer(use.call_id, result, tokens)
        else:
            new_result = truncate(result, limit, count, how_to_get_back(use.name, use.input))
        caps.append(Change(use, tokens, count(new_result), new_result))
    return [change for change in caps if change.saved > 0]


def make_plan(
    scan: Scan,
    policy: Policy,
    count: Count,
    relevance: dict[str, float] | None = None,
    *,
    prompt_budget: int = 200_000,
    offloader: Offloader | None = None,
    keep: Callable[[list[Change]], frozenset[str]] | None = None,
) -> Plan:
    """The changes ``policy`` makes: old results replaced (in ``order``, up to
    ``target_tokens``; ``keep``: given them, the ids of those that stay after all, the budget
    pools' choice), then results over the ``truncate_at`` cap (% of ``prompt_budget``) cut or,
    with an ``offloader``, moved to files."""
    if policy.mode not in MODES:
        raise CtxtopError(f"unknown mode {policy.mode!r}; use {', '.join(MODES)}")
    if policy.order not in ORDERS:
        raise CtxtopError(f"unknown order {policy.order!r}; use {', '.join(ORDERS)}")
    if policy.name not in POLICIES:
        raise CtxtopError(f"unknown policy {policy.name!r}; use {', '.join(POLICIES)}")
    if policy.order == "relevance" and relevance is None:
        raise CtxtopError("--order relevance needs the relevance scores of the session")
    changes: list[Change] = []
    for use in eligible(scan, policy) if policy.mode != "none" else []:
        result = use.result or ""
        before = count(result)
        new_result = _replacement(use, result, before, policy, count)
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
        if change.saved >= max(1, policy.min_result_tokens):
            changes.append(change)
    if policy.order == "largest":
        changes.sort(key=lambda c: (-c.saved, c.use.order))
    elif policy.order == "relevance" and relevance is not None:
        # Results the analysis did not score (those of the current turn) go last.
        changes.sort(key=lambda c: (relevance.get(c.use.call_id, math.inf), c.use.order))
    if policy.target_tokens is not None:
        taken: list[Change] = []
        total = 0
        for change in changes:
            if total >= policy.target_tokens:
                break
            taken.append(change)
            total += change.saved
        changes = taken
    if keep is not None:
        kept = keep(changes)
        changes = [change for change in changes if change.use.call_id not in kept]
    if policy.truncate_at is not None:
        limit = policy.truncate_at.of(prompt_budget)
        done = {change.use.call_id for change in changes}
        changes += capped(scan, policy, count, limit, offloader, done)
    plan = Plan(changes)
    if plan.saved < policy.min_tokens:
        return Plan([], skipped_below_minimum=plan.saved)
    return plan

"""Why a policy clears nothing, and the smallest change that would clear something.

Each tool use the model still sees is put down to the first thing that kept it (no result yet,
already cleared, an excluded tool, the policy's own protection, ...). The suggestion is found by
planning again with the policy relaxed one step at a time, so its saving is what that policy
really clears.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ctxtop.engine.editing.placeholder import MARK
from ctxtop.engine.editing.policy import TOOL_USES, TURNS, Plan, Policy, last
from ctxtop.engine.editing.turns import Scan, ToolUse

PlanFor = Callable[[Policy], Plan]

# How ``ctxtop edit`` spells each setting a suggestion changes.
OPTIONS = {
    "kind": "--policy",
    "keep_tool_uses": "--keep-tool-uses",
    "keep_turns": "--keep-turns",
    "min_tokens": "--min-tokens",
    "mode": "--mode",
}


def _are(count: int) -> str:
    return "is" if count == 1 else "are"


def _of(kept_turns: int, scan: Scan) -> str:
    """`` (the session has 1)`` when more turns are kept than there are."""
    return f" (the session has {scan.turns})" if kept_turns > scan.turns else ""


def _protection(use: ToolUse, scan: Scan, policy: Policy, below: set[str]) -> str:
    """What keeps ``use`` (a tool use the plan left alone) from being cleared; ``below``: the
    uses a plan under the minimum saving would have cleared."""
    if use.call_id in below:
        return "below the minimum saving"
    if use.result is None:
        return "without a result yet"
    if MARK in use.result:
        return "already cleared"
    if policy.excludes(use.name):
        return "of an excluded tool"
    in_kept_uses = use.order >= len(scan.uses) - policy.kept_tool_uses
    in_kept_turns = policy.kept_turns > 0 and use.turn > scan.turns - policy.kept_turns
    kept = [
        (in_kept_uses, f"among the last {policy.kept_tool_uses} kept"),
        (in_kept_turns, f"in {last(policy.kept_turns, 'turn')}{_of(policy.kept_turns, scan)}"),
    ]
    if policy.name == TURNS:
        kept.reverse()  # name the policy's own protection first
    for applies, words in kept:
        if applies:
            return words
    if policy.keeps_turn_in_progress and use.turn == scan.in_progress_turn():
        return "in the turn in progress"
    if policy.mode == "none":
        return "left alone by mode none"
    if policy.min_result_tokens > 1:
        return f"saving under {policy.min_result_tokens} tokens each as a placeholder"
    return "no smaller as a placeholder"


def protections(scan: Scan, policy: Policy, below: set[str]) -> dict[str, int]:
    """How many tool uses each protection kept, in the order of the first use it kept."""
    return dict(Counter(_protection(use, scan, policy, below) for use in scan.uses))


def reason(scan: Scan, policy: Policy, plan: Plan, kept: dict[str, int]) -> str:
    """One clause saying what protected what."""
    if plan.skipped_below_minimum:
        return (
            f"the results it would clear hold {plan.skipped_below_minimum:,} tokens, "
            f"below the minimum saving of {policy.min_tokens:,}"
        )
    total = len(scan.uses)
    if not total:
        return "the session has no tool results the model still sees"
    if len(kept) == 1:
        words = next(iter(kept))
        if total == 1:
            return f"its only tool use is {words}"
        return f"all {total} tool uses are {words}"
    parts = [f"{count} {_are(count)} {words}" for words, count in kept.items()]
    return f"of {total} tool uses, " + ", ".join(parts)


def _steps(policy: Policy, scan: Scan) -> Iterator[dict[str, Any]]:
    """Relaxed settings, the smallest change first: one step less of either kept count (the
    policy's own first), then both counts at 0, then the other policy. A count above what the
    session holds keeps as much as that, so the steps start there."""
    own, other = ("keep_tool_uses", "keep_turns")
    if policy.name == TURNS:
        own, other = other, own
    kept = {
        "keep_tool_uses": min(policy.kept_tool_uses, len(scan.uses)),
        "keep_turns": min(policy.kept_turns, scan.turns + 1),  # + the part before turn 1
    }
    for step in range(1, max(kept.values()) + 1):
        for setting in (own, other):
            if kept[setting] >= step:
                yield {setting: kept[setting] - step}
    if kept[own] and kept[other]:
        yield {own: 0, other: 0}
    if policy.name == TURNS:  # a turn in progress protected them: count tool uses instead
        uses = dataclasses.replace(policy, kind=TOOL_USES, keep_turns=None).kept_tool_uses
        uses = min(uses, len(scan.uses))
        switched: dict[str, Any] = {"kind": TOOL_USES}
        if policy.kept_turns:
            switched["keep_turns"] = 0
        for value in range(uses, -1, -1):
            yield {**switched, "keep_tool_uses": value}


def _candidates(policy: Policy, plan: Plan, scan: Scan) -> Iterator[dict[str, Any]]:
    if plan.skipped_below_minimum:
        yield {"min_tokens": plan.skipped_below_minimum}
        return
    if policy.mode == "none":
        yield {"mode": "placeholder"}
        return
    yield from _steps(policy, scan)


def option(settings: dict[str, Any]) -> str:
    """The settings as ``ctxtop edit`` options."""
    return " ".join(f"{OPTIONS[name]} {value}" for name, value in settings.items())


@dataclass(frozen=True, slots=True)
class Suggestion:
    """The smallest change of a policy that clears something: the settings it changes (by the
    policy's field names), as ``ctxtop edit`` options, the policy it makes and what it clears."""

    settings: dict[str, Any]
    option: str
    policy: Policy
    results: int
    tokens: int

    def as_json(self) -> dict[str, Any]:
        return {
            "set": self.settings,
            "option": self.option,
            "policy": self.policy.as_dict(),
            "results": self.results,
            "tokens": self.tokens,
        }


@dataclass(frozen=True, slots=True)
class NothingToClear:
    """Why an edit clears nothing: the reason, the count per protection, the suggestion and the
    one-line answer ``ctxtop edit`` prints."""

    reason: str
    protected: dict[str, int]
    suggestion: Suggestion | None
    message: str

    def as_json(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "protected": self.protected,
            "suggestion": self.suggestion.as_json() if self.suggestion is not None else None,
            "message": self.message,
        }


def suggestion(scan: Scan, policy: Policy, plan: Plan, plan_for: PlanFor) -> Suggestion | None:
    """The smallest change of ``policy`` that clears something, planned: None if none does."""
    for settings in _candidates(policy, plan, scan):
        relaxed = dataclasses.replace(policy, **settings)
        found = plan_for(relaxed)
        if found.changes:
            return Suggestion(settings, option(settings), relaxed, len(found.changes), found.saved)
    return None


def nothing_to_clear(
    scan: Scan, policy: Policy, plan: Plan, plan_for: PlanFor
) -> NothingToClear | None:
    """For a plan that clears nothing: the reason, the count per protection, the suggestion and
    the one-line answer ``ctxtop edit`` prints. None when the plan clears something."""
    if plan.changes:
        return None
    below: set[str] = set()
    if plan.skipped_below_minimum:
        unbounded = plan_for(dataclasses.replace(policy, min_tokens=0))
        below = {change.use.call_id for change in unbounded.changes}
    kept = protections(scan, policy, below)
    why = reason(scan, policy, plan, kept)
    found = suggestion(scan, policy, plan, plan_for)
    message = f"nothing to clear: {why}"
    if found is not None:
        results = "result" if found.results == 1 else "results"
        tokens = "token" if found.tokens == 1 else "tokens"
        message += (
            f"; {found.option} clears {found.results} {results} "
            f"({found.tokens:,} {tokens}, estimate)"
        )
    return NothingToClear(why, kept, found, message)

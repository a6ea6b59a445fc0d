"""``ctxtop edit``: plan which old tool results to clear, preview the fork in memory, and write
it (``engine/forks/transaction.py``: the session's bytes read once, the fork read back before it
is written, written atomically, logged for ``ctxtop undo``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxtop.engine.agents import AGENTS
from ctxtop.engine.agents.agent_window import agent_window
from ctxtop.engine.analysis.relevance import RelevanceIndex
from ctxtop.engine.analysis.sections import last_user_index
from ctxtop.engine.editing.explain import NothingToClear, nothing_to_clear
from ctxtop.engine.editing.offload import Offloader, default_directory
from ctxtop.engine.editing.policy import Change, Plan, Policy, make_plan
from ctxtop.engine.editing.pools import Candidate, Pools, keep_within
from ctxtop.engine.editing.preview import (
    SectionChange,
    ShownContext,
    cache_cost,
    diff_lines,
    section_table,
    sections,
    whole_context,
)
from ctxtop.engine.editing.turns import Scan
from ctxtop.engine.editing.writer import Writer
from ctxtop.engine.errors import InputError
from ctxtop.engine.forks.transaction import (
    EDITING,
    Loaded,
    NewFork,
    Outcome,
    Preview,
    commit,
    load,
    read_back,
    unwritten,
    usage_estimates,
)
from ctxtop.engine.models.registry import lookup as model_info
from ctxtop.engine.sessions.ledger import encoding_for
from ctxtop.engine.sessions.model import SessionState


def relevance_scores(state: SessionState, every: bool = False) -> dict[str, float]:
    """TF-IDF relevance of each old tool result (``every``: each result on the context, those
    of the turn in progress too) to the recent conversation (engine.analysis)."""
    context = state.context
    end = None if every else last_user_index(context)
    # Only the scores are used here: the results' sizes are not counted.
    ranked = RelevanceIndex().rank(state, context, end, lambda _: 0)
    return {row.tool_call_id: row.score for row in ranked}


@dataclass(frozen=True, slots=True)
class ChangedResult:
    """One tool result (and perhaps its call's input) the edit changes."""

    tool_call_id: str
    tool: str
    turn: int
    tokens_before: int
    tokens_after: int
    input_cleared: bool
    diff: tuple[str, ...]

    @classmethod
    def of(cls, change: Change) -> ChangedResult:
        use = change.use
        diff = diff_lines(use.result or "", change.new_result)
        return cls(
            use.call_id,
            use.name,
            use.turn,
            change.tokens_before,
            change.tokens_after,
            change.input_changed,
            tuple(diff),
        )

    def as_json(self, diff: bool = True) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "tool_call_id": self.tool_call_id,
            "tool": self.tool,
            "turn": self.turn,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "input_cleared": self.input_cleared,
        }
        if diff:
            shown["diff"] = list(self.diff)
        return shown


@dataclass(frozen=True, slots=True)
class TargetChoice:
    """What clearing down to a target kept (``--target``): the pools and their results."""

    target: str  # as given: 60% or 120,000
    target_tokens: int  # the whole context it means
    pools: Pools
    tools: dict[str, str]  # call id -> tool name, for the kept results

    def as_json(self, context_after: int) -> dict[str, Any]:
        pools = self.pools
        return {
            "target": self.target,
            "target_tokens": self.target_tokens,
            "reached": context_after <= self.target_tokens,
            "fill": pools.fill,
            "budget": pools.budget,
            "mandatory_pool": pools.mandatory_size,
            "mandatory_spent": pools.spent("mandatory"),
            "optional_pool": pools.optional_size,
            "optional_spent": pools.spent("optional"),
            "kept": [
                {
                    "tool_call_id": item.call_id,
                    "tool": self.tools.get(item.call_id, ""),
                    "tokens": item.tokens,
                    "priority": round(item.priority, 3),
                    "pool": item.pool,
                }
                for item in pools.kept
            ],
        }


@dataclass(frozen=True, slots=True)
class EditDetails:
    """An edit's own figures (``Preview.details``)."""

    policy: Policy
    sections: tuple[SectionChange, ...]  # tokens before and after per section
    changed: tuple[ChangedResult, ...]
    cleared_tokens: int
    below_minimum: int  # tokens a min saving kept (when nothing is cleared)
    nothing_to_clear: NothingToClear | None  # why nothing is cleared, and what would clear some
    tool_uses: int
    turns: int
    secrets_masked: int  # in the offloaded files
    target: TargetChoice | None = None
    context_after: int = 0  # the whole context after (for the target's "reached")

    def settings(self) -> dict[str, Any]:
        return {"policy": self.policy.as_dict()}

    def figures(self) -> dict[str, Any]:
        nothing = self.nothing_to_clear
        return {
            "sections": [row.as_json() for row in self.sections],
            "changed": [change.as_json() for change in self.changed],
            "cleared_tokens": self.cleared_tokens,
            "below_minimum": self.below_minimum,
            "nothing_to_clear": nothing.as_json() if nothing is not None else None,
            "tool_uses": self.tool_uses,
            "turns": self.turns,
            "secrets_masked": self.secrets_masked,
            "target": self.target.as_json(self.context_after) if self.target else None,
        }

    def logged(self) -> dict[str, Any]:
        return {
            "policy": self.policy.as_dict(),
            "changed": [change.as_json(diff=False) for change in self.changed],
        }


def writer_of(loaded: Loaded) -> tuple[SessionState, Writer]:
    """The session and its agent's fork writer (an error naming the file if it has none)."""
    state = loaded.require_state(EDITING)
    agent = AGENTS.get(state.agent)
    if agent is None or agent.writer is None:
        raise InputError(str(loaded.path), f"editing {state.agent} sessions is not supported yet")
    return state, loaded.writer(agent.writer)


def in_context_scan(writer: Writer, state: SessionState) -> Scan:
    """The writer's tool uses that the model still sees (not those before a compaction)."""
    scan = writer.scan()
    in_context = {
        block.tool_call_id
        for message in state.context
        for block in message.blocks
        if block.kind == "tool_result"
    }
    scan.uses = [use for use in scan.uses if use.result is None or use.call_id in in_context]
    for order, use in enumerate(scan.uses):
        use.order = order
    return scan


def _scanned(loaded: Loaded) -> tuple[SessionState, Writer, Scan]:
    """The session, its writer and the tool uses in context: worked out once per session (the
    scan parses every record), shared by its previews (which only read them)."""
    scanned = loaded.shared.get("edit")
    if scanned is None:
        state, writer = writer_of(loaded)
        scanned = loaded.shared["edit"] = (state, writer, in_context_scan(writer, state))
    return scanned


def preview_edit(
    loaded: Loaded,
    policy: Policy,
    *,
    relevance: dict[str, float] | None = None,
    results_dir: Path | None = None,
    shown: ShownContext | None = None,
    on_plan: Callable[[dict[str, str], dict[str, Any]], None] | None = None,
) -> Preview[EditDetails]:
    """Plan the edit and build the fork in memory, read back: nothing is written.

    With ``policy.offload``, large results go (on ``commit``) to files in ``results_dir``
    (default: the data dir's ``results``), in a directory named after the fork's session id.
    ``shown``: the dashboard's gauge figure for the same bytes, see ``whole_context``.
    ``on_plan``: given the replacement results and inputs by call id (a live plan is made of
    them: engine/live/apply_plan.py)."""
    state, writer, scan = _scanned(loaded)
    count = loaded.counter(encoding_for(state))
    fork = NewFork(writer, state.agent, state.cwd)
    offloader = None
    if policy.offload:
        offloader = Offloader((results_dir or default_directory()) / fork.session_id)
    if policy.order == "relevance" and relevance is None:
        relevance = relevance_scores(state)
    prompt_budget = _prompt_budget(state)
    before_sections, tokens_before = loaded.sections()
    chosen: list[TargetChoice] = []
    keep = None
    if policy.target is not None:
        before = whole_context(state, tokens_before, 0, shown, loaded.ledger).before
        # One long turn has no result before its user message: every result is scored.
        priorities = relevance_scores(state, every=True)
        target = _target_keeper(state, policy, before, loaded.factor().value, priorities)
        keep, chosen = target
    plan: Plan = make_plan(
        scan, policy, count, relevance, prompt_budget=prompt_budget, offloader=offloader, keep=keep
    )

    def plan_for(relaxed: Policy) -> Plan:  # a relaxed policy, planned on the same scan
        return make_plan(scan, relaxed, count, relevance, prompt_budget=prompt_budget)

    results = {c.use.call_id: c.new_result for c in plan.changes}
    inputs = {c.use.call_id: c.new_input for c in plan.changes if c.input_changed}
    if on_plan is not None:
        on_plan(results, inputs)
    try:
        fork_data = writer.render(results, inputs, fork.session_id)
    except RecursionError:
        raise InputError(str(loaded.path), "a record is nested too deeply to rewrite") from None
    after, after_ledger = read_back(loaded, fork.path, fork_data)
    # The fork is counted with its session's factor (its own requests are the session's).
    after_sections, tokens_after = sections(after, after_ledger, loaded.factor())
    saved = tokens_before - tokens_after
    context = whole_context(state, tokens_before, saved, shown, loaded.ledger)
    # The fork's context is this estimate until the agent's next request (not its parent's);
    # usage a format's fork holds after what the edit changed adds up to it too.
    usage = usage_estimates(after, after_ledger, context.after)
    details = EditDetails(
        policy,
        section_table(before_sections, after_sections),
        tuple(ChangedResult.of(change) for change in plan.changes),
        plan.saved,
        plan.skipped_below_minimum if not plan.changes else 0,
        within_target(chosen[0])
        if chosen and not plan.changes and chosen[0].pools.kept
        else nothing_to_clear(scan, policy, plan, plan_for),
        len(scan.uses),
        scan.turns,
        offloader.masker.count if offloader is not None else 0,
        chosen[0] if chosen else None,
        context.after,
    )
    return fork.preview(
        "edit",
        loaded,
        fork_data,
        (tokens_before, tokens_after),
        context,
        cache_cost(after, set(results), saved, set(inputs), after_ledger, loaded.factor()),
        details,
        usage=usage,
        offloader=offloader,
    )


def target_lines(choice: TargetChoice, after: int) -> list[str]:
    """The target, the two pools and each result they keep (``ctxtop edit --target``); ``after``:
    the whole context after the edit."""
    pools = choice.pools
    reached = "reached" if after <= choice.target_tokens else f"not reached ({after:,} after)"
    lines = [
        f"target: {target_words(choice)}, {reached}; the old results' budget {pools.budget:,}",
        f"  kept whole beyond placeholders: mandatory pool (priority >= 0.7)"
        f" {pools.spent('mandatory'):,} of"
        f" {pools.mandatory_size:,}, optional pool ({pools.fill})"
        f" {pools.spent('optional'):,} of {pools.optional_size:,}",
    ]
    for item in pools.kept:
        lines.append(
            f"  kept ({item.pool} pool): {choice.tools.get(item.call_id, '')} {item.call_id}"
            f" {item.tokens:,} tokens, priority {round(item.priority, 3):.2f}"
        )
    return lines


def target_words(choice: TargetChoice) -> str:
    """``60% of the window = 120,000 tokens`` or ``120,000 tokens``."""
    tokens = f"{choice.target_tokens:,} tokens"
    return f"{choice.target} of the window = {tokens}" if "%" in choice.target else tokens


def within_target(choice: TargetChoice) -> NothingToClear:
    """Why a target clears nothing: the pools keep every old result the policy would clear."""
    kept = len(choice.pools.kept)
    results = "result" if kept == 1 else "results"
    why = (
        f"the context is within the target ({choice.target}: {choice.target_tokens:,} tokens)"
        f" with all {kept} old {results} kept"
    )
    return NothingToClear(why, {}, None, f"nothing to clear: {why}")


def write_edit(preview: Preview[EditDetails], *, logged: bool = True) -> Outcome[EditDetails]:
    """Write a previewed edit; one that clears nothing is not worth a fork. ``logged``: as
    ``commit``'s."""
    if not preview.details.changed:
        return unwritten(preview, dry_run=False)
    return commit(preview, logged=logged)


def edit_session(
    path: str | Path,
    policy: Policy,
    *,
    dry_run: bool = False,
    relevance: dict[str, float] | None = None,
    results_dir: Path | None = None,
    upto: int | None = None,
    shown: ShownContext | None = None,
    on_plan: Callable[[dict[str, str], dict[str, Any]], None] | None = None,
) -> Outcome[EditDetails]:
    """The whole transaction (``ctxtop edit``): load, preview, and unless ``dry_run`` write.
    ``upto`` and ``shown``: the dashboard's sample (its bytes and its gauge figure)."""
    loaded = load(Path(path), EDITING, upto)
    preview = preview_edit(
        loaded, policy, relevance=relevance, results_dir=results_dir, shown=shown, on_plan=on_plan
    )
    return unwritten(preview, dry_run=True) if dry_run else write_edit(preview)


def _window(state: SessionState) -> int:
    """The session's context window (``session_window``)."""
    return agent_window(state).tokens


def _prompt_budget(state: SessionState) -> int:
    """What a request may send: the session's context window less the model's output
    reserve."""
    window = _window(state)
    return max(window - model_info(state.model).max_output, window // 2)


def _target_keeper(
    state: SessionState,
    policy: Policy,
    before: int,
    factor: float,
    relevance: dict[str, float],
) -> tuple[Callable[[list[Change]], frozenset[str]], list[TargetChoice]]:
    """For ``make_plan``: given the results the policy would clear, those the budget pools keep
    (recorded in the list returned beside it). The budget is the target less the rest of the
    whole context (``before`` less these results), in the tokenizer's counts (``factor``: the
    session's API tokens per tokenizer token); a result's priority is its relevance score as a
    share of the best one's."""
    assert policy.target is not None
    target, chosen = policy.target, []
    goal = target.tokens(_window(state))

    def keep(changes: list[Change]) -> frozenset[str]:
        best = max((relevance.get(c.use.call_id, 0.0) for c in changes), default=0.0)
        candidates = [
            Candidate(
                change.use.call_id,
                change.tokens_before,
                change.tokens_after,
                relevance.get(change.use.call_id, 0.0) / best if best > 0 else 0.0,
                change.use.order,
            )
            for change in changes
        ]
        whole = sum(item.tokens for item in candidates)
        budget = round((goal - before) / factor) + whole
        pools = keep_within(candidates, budget, policy.fill)
        tools = {c.use.call_id: c.use.name for c in changes if c.use.call_id in pools.kept_ids}
        chosen.append(TargetChoice(str(target), goal, pools, tools))
        return pools.kept_ids

    return keep, chosen

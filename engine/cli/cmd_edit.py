"""``ctxtop edit``: clear old tool results into a new session the agent can resume.

A turn is a request of the user and all that answered it; a tool use is one tool call and its
result. Two policies say which old results stay: tool-uses (the default) keeps the last 3 tool
uses, whatever turn they are in, as Anthropic's clear_tool_uses does; turns keeps the last 3
turns whole, as CodeCompanion's cycles. Tool uses is the default because a window usually fills
during one long agentic turn (one prompt, many tool calls), where counting turns clears nothing.
When a policy clears nothing, the answer says what kept the results and the smallest change of
the options that would clear some, with its saving.

The agent's file is never modified: the edit is a fork next to it (Claude Code: a new
``<uuid>.jsonl`` in the project dir; the generic format: a new JSON file). ``--dry-run`` shows
the preview (tokens per section, changed results, cache rewrite cost) without writing anything.
``--order relevance`` clears the results least relevant to the recent conversation first.
``--target 60%`` (of the window) or ``--target 120k`` clears old results down to that whole
context, keeping the most relevant through two budget pools (``--fill``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ctxtop.engine.cli.arguments import add_count_option, add_fork_outputs, count_arg, fork_command
from ctxtop.engine.editing.policy import (
    DEFAULT_EXCLUDE,
    DEFAULT_KEEP,
    DEFAULT_SKELETON_BUDGET,
    DEFAULT_TRUNCATE_AT,
    MIN_RESULT_SAVING,
    MODES,
    ORDERS,
    POLICIES,
    Policy,
)
from ctxtop.engine.editing.pools import DEFAULT_FILL, FILL_MODES, Target
from ctxtop.engine.editing.preview import pays_off_after
from ctxtop.engine.editing.size_limit import Limit
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.forks.edit import EditDetails, edit_session, target_lines
from ctxtop.engine.forks.transaction import Details, Outcome, Preview
from ctxtop.engine.safety.terminal import printable
from ctxtop.engine.words import plural


def counted_as(preview: Preview[Details]) -> str:
    """How a fork's figures were counted: with the session's tokenizer factor or not."""
    return "calibrated" if preview.tokens_source == "calibrated" else "estimate"


def context_line(preview: Preview[Details]) -> str:
    """The whole context before and after, the gauge's and the report's figure (the fork opens
    with the after), then the part the log's messages hold, which the fork changes."""
    before, after = preview.tokens_before, preview.tokens_after
    messages = f"{before:,} -> {after:,} in the log's messages ({counted_as(preview)})"
    context = preview.context
    return (
        f"context: {context.before:,} ({context.source}) -> "
        f"{context.after:,} (estimated) tokens; {messages}"
    )


def _text(outcome: Outcome[EditDetails]) -> str:
    preview = outcome.preview
    details = preview.details
    lines = [f"{preview.loaded.path} ({preview.agent})", f"policy: {details.policy.summary()}"]
    how = counted_as(preview)
    lines.append(f"{context_line(preview)}, {preview.tokens_before - preview.tokens_after} fewer")
    for row in details.sections:
        if row.tokens_before != row.tokens_after:
            lines.append(f"  {row.section}: {row.tokens_before} -> {row.tokens_after}")
    if details.target is not None:
        lines.extend(target_lines(details.target, preview.context.after))
    if details.nothing_to_clear is not None:
        lines.append(details.nothing_to_clear.message)
        return "\n".join(lines)
    count = len(details.changed)
    lines.append(f"{plural(count, 'tool result')} change{'s' if count == 1 else ''}:")
    for change in details.changed:
        lines.append(
            f"  {change.tool} {change.tool_call_id}: "
            f"{change.tokens_before} -> {change.tokens_after} tokens"
        )
        lines.extend(f"    {line}" for line in change.diff)
    cache = preview.cache
    lines.append(f"cache rewrite: {cache.rewrite_tokens} tokens ({how}) after the first edit")
    if cache.break_even_requests is not None:
        lines.append(
            f"  costs ${cache.rewrite_cost_usd:.4f} once ({cache.priced_by}), "
            f"saves ${cache.saving_per_request_usd:.5f} per request: "
            + pays_off_after(cache.break_even_requests)
        )
    lines.extend(f"warning: {warning}" for warning in outcome.warnings)
    lines.extend(f"large result written to: {path}" for path in outcome.offloaded)
    if details.secrets_masked:
        lines.append(
            f"secrets masked: {details.secrets_masked} (in the large-result files; "
            "see the README's Safety section)"
        )
    lines.extend(written_lines(outcome, "fork"))
    return "\n".join(lines)


def written_lines(outcome: Outcome[Details], what: str) -> list[str]:
    """Where the fork (``what`` names it) was written, how to resume and undo it; or that a
    dry run wrote nothing."""
    if not outcome.fork:
        return ["dry run: nothing written"]
    lines = [f"{what} written: {outcome.fork}"]
    if outcome.resume_command:
        lines.append(f"resume with: {outcome.resume_command}")
    return [*lines, "undo with: ctxtop undo"]


def _target(text: str) -> Target:
    try:
        return Target.parse(text)
    except CtxtopError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _limit(text: str) -> Limit:
    try:
        return Limit.parse(text)
    except CtxtopError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def run(args: argparse.Namespace) -> int:
    offload = args.offload or args.large_results_dir is not None
    truncate_at = args.truncate_at
    if truncate_at is None and (args.truncate or offload):
        truncate_at = DEFAULT_TRUNCATE_AT
    policy = Policy(
        kind=args.policy,
        keep_turns=args.keep_turns,
        keep_tool_uses=args.keep_tool_uses,
        min_tokens=args.min_tokens,
        min_result_tokens=args.min_result_tokens,
        exclude=DEFAULT_EXCLUDE + tuple(args.exclude or ()),
        clear_inputs=args.clear_inputs,
        order=args.order,
        target_tokens=args.target_tokens,
        mode=args.mode,
        skeleton_budget=args.skeleton_budget,
        truncate_at=truncate_at,
        offload=offload,
        target=args.target,
        fill=args.fill,
    )
    if args.live:
        return run_live(args, policy)
    outcome = edit_session(
        args.session, policy, dry_run=args.dry_run, results_dir=args.large_results_dir
    )
    if args.json:
        print(json.dumps(outcome.as_json(), ensure_ascii=False, indent=2))
    else:
        print(printable(_text(outcome)))
    return 0


def run_live(args: argparse.Namespace, policy: Policy) -> int:
    """``--live``: the same edit, applied by the proxy to the running agent's requests."""
    from ctxtop.engine.cli.cmd_live import applied_lines
    from ctxtop.engine.live.apply_plan import apply_edit

    plan, outcome, path = apply_edit(args.session, policy)
    if args.json:
        shown = {**outcome.as_json(), "live_plan": str(path)}
        print(json.dumps(shown, ensure_ascii=False, indent=2))
    else:
        print(printable("\n".join(applied_lines(plan, str(path)))))
    return 0


def register(subparsers: Any) -> None:
    parser = fork_command(
        subparsers, "edit", "clear old tool results into a resumable fork", __doc__ or ""
    )
    parser.add_argument(
        "--policy",
        choices=POLICIES,
        default=None,
        help="which old results stay: tool-uses (the default) keeps the last N tool uses, "
        "whatever turn they are in (Anthropic's clear_tool_uses), so one long agentic turn is "
        "edited too; turns keeps the last N user turns whole (CodeCompanion's cycles) and never "
        "cuts a turn in progress. --keep-turns given alone picks turns",
    )
    add_count_option(
        parser,
        "--keep-tool-uses",
        None,
        f"keep the last N tool uses (a call and its result) whole; default {DEFAULT_KEEP} "
        "under the tool-uses policy, 0 under turns",
    )
    parser.add_argument(
        "--keep-turns",
        "--keep-cycles",
        dest="keep_turns",
        type=count_arg,
        default=None,
        metavar="N",
        help=f"keep the last N user turns whole; default {DEFAULT_KEEP} under the turns policy, "
        "0 under tool-uses; given alone it picks the turns policy",
    )
    add_count_option(
        parser,
        "--min-tokens",
        0,
        "clear nothing unless at least N tokens go (as Anthropic's clear_at_least; default 0)",
    )
    add_count_option(
        parser,
        "--min-result-tokens",
        MIN_RESULT_SAVING,
        f"leave a result whose clearing saves fewer than N tokens (default {MIN_RESULT_SAVING})",
    )
    add_count_option(parser, "--target-tokens", None, "stop once N tokens are cleared (in --order)")
    parser.add_argument(
        "--exclude",
        action="append",
        metavar="TOOL",
        help="never touch this tool (repeatable, globs allowed; memory tools never are)",
    )
    parser.add_argument(
        "--clear-inputs",
        action="store_true",
        help="also clear long strings in the tool calls' inputs",
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        default="placeholder",
        help="what replaces an old result: a placeholder, a skeleton (file reads in a known "
        "language become their outline; others a placeholder), or none (old results stay)",
    )
    parser.add_argument(
        "--skeleton-budget",
        type=_limit,
        default=DEFAULT_SKELETON_BUDGET,
        metavar="SIZE",
        help="size of each outline: N tokens or N%% of the result (default 25%%)",
    )
    parser.add_argument(
        "--truncate",
        action="store_true",
        help="cut every finished result over the limit (default 50%% of the model's prompt "
        "budget: its context window less its output reserve) to its first 40%% and last 60%%",
    )
    parser.add_argument(
        "--truncate-at",
        type=_limit,
        default=None,
        metavar="LIMIT",
        help="the --truncate limit: N tokens or N%% of the prompt budget; implies --truncate",
    )
    parser.add_argument(
        "--offload",
        action="store_true",
        help="results over the --truncate limit go whole to a new file (JSON with its schema) "
        "and a pointer replaces them; implies --truncate",
    )
    parser.add_argument(
        "--large-results-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where --offload writes (default: results/ in ctxtop's data dir); implies --offload",
    )
    parser.add_argument(
        "--order",
        choices=ORDERS,
        default="oldest",
        help="which results go first (relevance: least relevant to the recent conversation)",
    )
    parser.add_argument(
        "--target",
        type=_target,
        default=None,
        metavar="SIZE",
        help="clear old results until the whole context is at most SIZE: N%% of the window or "
        "tokens (120k, 1.5m, 120000); the most relevant stay, priority >= 0.7 first (the "
        "mandatory pool), then the rest as --fill allows",
    )
    parser.add_argument(
        "--fill",
        choices=FILL_MODES,
        default=DEFAULT_FILL,
        help="with --target, the optional pool for results of priority < 0.7: minimal 0, "
        "fillHalf half the budget, double as much as the mandatory pool took, fill (the default) "
        "all the budget left",
    )
    add_fork_outputs(parser, run, "preview only, write nothing", live="edit")

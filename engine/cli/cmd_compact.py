"""``ctxtop compact``: summarise the older part of a session into a new session to resume.

A round is one model response and the tool calls and results it produced; a turn is one user
request and all the rounds that answered it. The last ``--keep-rounds`` rounds (default 3) stay
verbatim, or every round from ``--before`` on; the rest, back to the previous summary, is
summarised, including the earlier rounds of the turn in progress (then that turn's request is kept
verbatim before the kept rounds, so the agent still knows what it was asked). A call is never
separated from its result, and a round still waiting for results is kept whole. Summarisers:
``structured`` (offline) or ``llm`` (the model in the settings' ``llm:`` block, falling back to
``structured`` on any failure). The agent's file is never modified: the compacted session
is a new file next to it; ``ctxtop undo`` removes it. ``--dry-run`` writes nothing.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ctxtop.engine.agents.strategies import simulate_file
from ctxtop.engine.cli.arguments import add_count_option, add_fork_outputs, fork_command, tokens_arg
from ctxtop.engine.cli.cmd_edit import context_line, counted_as, written_lines
from ctxtop.engine.compaction.cut_table import cut_headline, cut_lines, requests_by_turn
from ctxtop.engine.config import load_settings
from ctxtop.engine.editing.preview import pays_off_after
from ctxtop.engine.forks.compact import (
    DEFAULT_KEEP_ROUNDS,
    SUMMARIZERS,
    CompactDetails,
    compact_session,
    write_compact,
)
from ctxtop.engine.forks.transaction import Outcome
from ctxtop.engine.safety.terminal import printable


def masked_note(count: int, summarizer: str) -> str:
    where = "sent to the LLM and in the summary" if summarizer == "llm" else "in the summary"
    return f"secrets masked: {count} ({where}; see the README's Safety section)"


def _text(outcome: Outcome[CompactDetails]) -> str:
    preview = outcome.preview
    details, cut = preview.details, preview.details.cut
    lines = [f"{preview.loaded.path} ({preview.agent})", "", details.summary, ""]
    lines.append(
        f"summary by {details.summarizer}: {details.summary_tokens} tokens (estimate; "
        f"budget {details.budget}); "
        + cut_headline(details.round_table, cut.kept_request is not None)
    )
    lines.extend(cut_lines(details.round_table, requests_by_turn(cut)))
    how = counted_as(preview)
    lines.append(context_line(preview))
    cache = preview.cache
    if cache.break_even_requests is not None:
        lines.append(
            f"cache rewrite: {cache.rewrite_tokens} tokens ({how}) once "
            f"(${cache.rewrite_cost_usd:.4f}, {cache.priced_by}); "
            + pays_off_after(cache.break_even_requests)
        )
    lines.extend(f"warning: {warning}" for warning in outcome.warnings)
    if details.refused:
        lines.append(details.refused)
    if details.secrets_masked:
        lines.append(masked_note(details.secrets_masked, details.summarizer_requested))
    lines.extend(written_lines(outcome, "compacted session"))
    return "\n".join(lines)


def run_live(args: argparse.Namespace) -> int:
    """``--live``: the same compaction, applied by the proxy to the running agent's requests."""
    from ctxtop.engine.cli.cmd_live import applied_lines
    from ctxtop.engine.live.apply_plan import apply_compact

    plan, outcome, path = apply_compact(
        args.session,
        summarizer=args.summarizer,
        keep_rounds=args.keep_rounds,
        before=args.before,
        budget=args.budget,
        llm=load_settings().llm,
    )
    if args.json:
        shown = {**outcome.as_json(), "live_plan": str(path)}
        print(json.dumps(shown, ensure_ascii=False, indent=2))
    else:
        print(printable("\n".join(applied_lines(plan, str(path)))))
    return 0


def run(args: argparse.Namespace) -> int:
    if args.live:
        return run_live(args)
    previewed = compact_session(
        args.session,
        summarizer=args.summarizer,
        keep_rounds=args.keep_rounds,
        before=args.before,
        budget=args.budget,
        dry_run=True,
        llm=load_settings().llm,
    )
    # The summary shown is the one written; one that is not smaller is refused in one line.
    written = previewed if args.dry_run else write_compact(previewed.preview)
    if args.json:
        saved = written.preview.tokens_before - written.preview.tokens_after
        outcome = {**written.as_json(), "policies": simulate_file(args.session, saving=saved)}
        print(json.dumps(outcome, ensure_ascii=False, indent=2))
    else:
        print(printable(_text(written)))
    return 0


def register(subparsers: Any) -> None:
    parser = fork_command(
        subparsers, "compact", "summarise old rounds into a resumable session", __doc__ or ""
    )
    parser.add_argument("--summarizer", choices=SUMMARIZERS, default="structured")
    add_count_option(
        parser,
        "--keep-rounds",
        DEFAULT_KEEP_ROUNDS,
        "keep the last N rounds verbatim (a round: one model response and its tool calls and "
        f"results; default {DEFAULT_KEEP_ROUNDS})",
    )
    add_count_option(
        parser,
        "--before",
        None,
        "compact every round before this one (rounds since the last summary, from 1; "
        "the JSON's round_table numbers them)",
        metavar="ROUND",
    )
    parser.add_argument(
        "--budget",
        type=tokens_arg,
        default=None,
        metavar="TOKENS",
        help="the summary's token budget, e.g. 2000 or 2k (default: 10%% of the model's window)",
    )
    add_fork_outputs(parser, run, "show the summary, write nothing", live="compaction")

"""``ctxtop compact``: summarise the older part of a session into a new session to resume.

The last ``--keep-rounds`` rounds (a round: one user request and everything that answered it)
stay verbatim, or every round from ``--before`` on; the rest, back to the previous summary, is
summarised (``structured``: offline; ``llm``: the model in the settings' ``llm:`` block, falling
back to ``structured`` on any failure). The agent's file is never modified: the compacted session
is a new file next to it; ``ctxtop undo`` removes it. ``--dry-run`` writes nothing.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from engine.cli.arguments import add_count_option
from engine.compaction.compact import SUMMARIZERS, compact_session
from engine.compaction.policies import simulate_file
from engine.config import load_settings
from engine.safety.terminal import printable


def masked_note(count: int, summarizer: str) -> str:
    where = "sent to the LLM and in the summary" if summarizer == "llm" else "in the summary"
    return f"secrets masked: {count} ({where}; see the README's Safety section)"


def _text(outcome: dict[str, Any]) -> str:
    lines = [f"{outcome['source']} ({outcome['agent']})", "", outcome["summary"], ""]
    lines.append(
        f"summary by {outcome['summarizer']}: {outcome['summary_tokens']} tokens (estimate; "
        f"budget {outcome['budget']}); {outcome['summarised_rounds']} rounds summarised, "
        f"{outcome['kept_rounds']} kept verbatim"
    )
    lines.append(
        f"context estimate: {outcome['tokens_before']} -> {outcome['tokens_after']} tokens"
    )
    if outcome["break_even_requests"] is not None:
        lines.append(
            f"cache rewrite: {outcome['cache_rewrite_tokens']} tokens (estimate) once "
            f"(${outcome['cache_rewrite_cost_usd']:.4f}, {outcome['priced_by']}); "
            f"pays off after {outcome['break_even_requests']} requests"
        )
    lines.extend(f"warning: {warning}" for warning in outcome["warnings"])
    if outcome["secrets_masked"]:
        lines.append(masked_note(outcome["secrets_masked"], outcome["summarizer_requested"]))
    if outcome["fork"]:
        lines.append(f"compacted session written: {outcome['fork']}")
        if outcome["resume_command"]:
            lines.append(f"resume with: {outcome['resume_command']}")
        lines.append("undo with: ctxtop undo")
    else:
        lines.append("dry run: nothing written")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    outcome = compact_session(
        args.session,
        summarizer=args.summarizer,
        keep_rounds=args.keep_rounds,
        before=args.before,
        budget=args.budget,
        dry_run=args.dry_run,
        llm=load_settings().llm,
    )
    if args.json:
        saved = outcome["tokens_before"] - outcome["tokens_after"]
        outcome["policies"] = simulate_file(args.session, saving=saved)
        print(json.dumps(outcome, ensure_ascii=False, indent=2))
    else:
        print(printable(_text(outcome)))
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "compact", help="summarise old rounds into a resumable session", description=__doc__
    )
    parser.add_argument("session", metavar="SESSION", help="a session log file")
    parser.add_argument("--summarizer", choices=SUMMARIZERS, default="structured")
    add_count_option(parser, "--keep-rounds", 1, "keep the last N rounds verbatim (default 1)")
    add_count_option(
        parser,
        "--before",
        None,
        "compact every round before this one (rounds since the last summary, from 1)",
        metavar="ROUND",
    )
    add_count_option(
        parser,
        "--budget",
        None,
        "the summary's token budget (default: 10%% of the model's window)",
        metavar="TOKENS",
    )
    parser.add_argument("--dry-run", action="store_true", help="show the summary, write nothing")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)

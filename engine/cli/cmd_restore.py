"""``ctxtop restore SESSION --compaction N``: a new session the agent resumes, forked at
compaction N (from 1, in log order, as ``ctxtop compactions`` lists them). Without ``--with``
it is the history up to just before that compaction, as it was. With ``--with ITEM…`` (ids
from ``ctxtop compactions``: U1, F2, T3, or ``forgotten`` for every user message the summary
does not carry) it keeps the summary and re-adds those items right after it, as one message
marked as ctxtop's. The agent's file is never modified; ``ctxtop undo`` removes the fork."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from ctxtop.engine.cli.arguments import add_fork_outputs, count_arg, fork_command
from ctxtop.engine.cli.cmd_edit import context_line, written_lines
from ctxtop.engine.safety.terminal import printable

if TYPE_CHECKING:
    from ctxtop.engine.forks.restore import RestoreDetails
    from ctxtop.engine.forks.transaction import Outcome


def _text(outcome: Outcome[RestoreDetails]) -> str:
    preview = outcome.preview
    details = preview.details
    number = details.compaction
    if details.kind == "before":
        what = f"the history up to just before compaction {number} (line {details.line})"
    else:
        what = f"compaction {number}'s summary and {', '.join(details.items)} re-added after it"
    lines = [f"{preview.loaded.path} ({preview.agent}): {what}", context_line(preview)]
    lines.extend(f"warning: {warning}" for warning in outcome.warnings)
    lines.extend(written_lines(outcome, "restored session"))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from ctxtop.engine.forks.restore import restore_session

    outcome = restore_session(args.session, args.compaction, args.items or (), dry_run=args.dry_run)
    if args.json:
        print(json.dumps(outcome.as_json(), ensure_ascii=False, indent=2))
    else:
        print(printable(_text(outcome)))
    return 0


def register(subparsers: Any) -> None:
    parser = fork_command(
        subparsers, "restore", "fork a session back at one of its compactions", __doc__ or ""
    )
    parser.add_argument(
        "--compaction",
        type=count_arg,
        required=True,
        metavar="N",
        help="the compaction to go back to: N from 1 in log order (ctxtop compactions lists them)",
    )
    parser.add_argument(
        "--with",
        dest="items",
        nargs="+",
        metavar="ITEM",
        help="keep the summary and re-add these dropped items (U1, F2, T3, or forgotten)",
    )
    add_fork_outputs(parser, run, "show what it does, write nothing")

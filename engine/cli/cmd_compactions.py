"""``ctxtop compactions SESSION``: every compaction of a session (the agent's own, its
microcompactions, ctxtop's): what the context held just before it, what the summary kept, what
it dropped, and how much of each user message the summary carries (low: a forgotten
instruction). Item ids (U1, F2, T3) are what ``ctxtop restore --with`` takes."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ctxtop.engine.cli.cmd_report import json_text
from ctxtop.engine.safety.terminal import printable


def run(args: argparse.Namespace) -> int:
    from ctxtop.engine.agents.session_reader import SessionReader, read_all
    from ctxtop.engine.analysis.report import analyze_session
    from ctxtop.engine.forks.compaction_output import history_json, history_lines
    from ctxtop.engine.forks.compactions import inspect_compactions
    from ctxtop.engine.forks.transaction import read_session_bytes
    from ctxtop.engine.live.whole import outside_log, with_compaction_afters
    from ctxtop.engine.sessions.sample import build_sample

    path = Path(args.session)
    data = read_session_bytes(path)
    reader = SessionReader(path, data=data)
    state = read_all(reader)
    assert reader.adapter is not None
    # Each compaction's "after" as the report and the dashboard give it (the whole context).
    sample = with_compaction_afters(
        build_sample(reader.adapter), outside_log(analyze_session(reader.adapter))
    )
    history = inspect_compactions(path, data, state, sample.compactions)
    if args.json:
        print(json_text(history_json(history)))
    else:
        print(printable("\n".join(history_lines(history))))
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "compactions", help="what each compaction kept and dropped", description=__doc__
    )
    parser.add_argument("session", metavar="SESSION", help="a session log file")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)

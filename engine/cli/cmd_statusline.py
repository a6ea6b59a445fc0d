"""``ctxtop statusline``: Claude Code's status-line command (JSON on stdin, one line out)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from engine.config import load_settings
from engine.errors import CtxtopError


def run(args: argparse.Namespace) -> int:
    from engine.statusline import status_line

    try:
        data = json.loads(sys.stdin.read() or "null")
    except (json.JSONDecodeError, UnicodeDecodeError):
        data = None
    try:
        thresholds = load_settings().thresholds
    except CtxtopError:
        thresholds = None
    try:
        line = status_line(data, thresholds)
    except Exception as error:  # the status bar shows a short line, never a traceback
        line = f"ctxtop: {type(error).__name__}"
    print(line)
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "statusline",
        help="one status line for Claude Code (reads its status-line JSON on stdin)",
        description="Print fill, distance to auto-compaction and the largest part of the context "
        "for Claude Code's statusLine command.",
    )
    parser.set_defaults(func=run)

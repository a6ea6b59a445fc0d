"""``ctxtop statusline``: Claude Code's status-line command (JSON on stdin, one line out)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from engine.config import load_settings
from engine.errors import CtxtopError, InputError
from engine.safety.input_limits import STDIN, read_input

# Claude Code's status JSON is a few KB; more is not a status.
STATUS_LIMIT = 1 << 20


def run(args: argparse.Namespace) -> int:
    from engine.statusline import status_line

    raw = read_input(STDIN, STATUS_LIMIT)  # over the limit, a device: one line, exit 2
    try:
        data = json.loads(raw or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError):
        data = None
    except RecursionError:
        raise InputError("stdin", "invalid JSON (nested too deeply)") from None
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

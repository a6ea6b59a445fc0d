"""``ctxtop statusline``: Claude Code's status-line command (JSON on stdin, one line out)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ctxtop.engine.config import load_settings
from ctxtop.engine.errors import CtxtopError, InputError
from ctxtop.engine.safety.input_limits import STDIN, read_input
from ctxtop.engine.safety.terminal import one_line

# Claude Code's status JSON is a few KB; more is not a status.
STATUS_LIMIT = 1 << 20


def run(args: argparse.Namespace) -> int:
    """Claude Code shows the line only when the command exits 0 (2.1.332: a non-zero exit
    blanks the bar, its stderr goes to the debug log). So input that is not Claude Code's status
    JSON is an error (stderr, exit 2: no status bar runs it so), while a transcript that cannot
    be read is said on stderr and the bar still gets a line, from the JSON's own figures."""
    from ctxtop.engine.statusline import NO_TRANSCRIPT, UNREADABLE, status_line

    raw = read_input(STDIN, STATUS_LIMIT)  # over the limit, a device: one line, exit 2
    try:
        data = json.loads(raw or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError):
        data = None
    except RecursionError:
        raise InputError("stdin", "invalid JSON (nested too deeply)") from None
    if not isinstance(data, dict):
        raise InputError(
            "stdin",
            "not a status JSON object (ctxtop statusline reads what Claude Code passes to its"
            " statusLine command)",
        )
    try:
        thresholds = load_settings().thresholds
    except CtxtopError as error:
        print(f"ctxtop: {one_line(str(error))}", file=sys.stderr)
        thresholds = None
    try:
        line = status_line(data, thresholds)
    except Exception as error:  # the status bar shows a short line, never a traceback
        why = str(error) if isinstance(error, CtxtopError) else type(error).__name__
        print(f"ctxtop: {one_line(why)}", file=sys.stderr)
        without = {key: value for key, value in data.items() if key != "transcript_path"}
        line = status_line(without, thresholds)
        if line == NO_TRANSCRIPT:
            line = UNREADABLE
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

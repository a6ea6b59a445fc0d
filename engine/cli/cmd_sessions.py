"""``ctxtop sessions``: sessions found in each agent's default location, newest first."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from typing import Any

from ctxtop.engine.agents import ADAPTERS
from ctxtop.engine.agents.discovery import Found, discover
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.safety.terminal import one_line

# A listing reads only the end of big files: enough for the latest request and context.
QUICK_LOOK_BYTES = 4 << 20


def _row(found: Found) -> dict[str, Any]:
    row: dict[str, Any] = {
        "agent": found.agent,
        "file": str(found.path),
        "modified": datetime.fromtimestamp(found.mtime, UTC).isoformat(timespec="seconds"),
        "size": found.size,
    }
    from ctxtop.engine.agents.session_reader import SessionReader, read_all
    from ctxtop.engine.live.whole import whole_context_quickly
    from ctxtop.engine.sessions.sample import build_sample

    try:
        reader = SessionReader(found.path, tail_bytes=QUICK_LOOK_BYTES)
        read_all(reader)
        assert reader.adapter is not None
        sample = whole_context_quickly(reader.adapter, build_sample(reader.adapter))
    except CtxtopError as error:
        row["error"] = str(error)
        return row
    row.update(
        session_id=sample.session_id,
        cwd=sample.cwd,
        title=sample.title,
        model=sample.model,
        last_activity=sample.last_activity or row["modified"],
        context_tokens=sample.context.value,
        context_source=sample.context.source,
        context_window=sample.window.tokens,
        fill_percent=sample.fill_percent,
        api_requests=None if reader.partial else sample.api_requests,
        partial_read=reader.partial,
    )
    return row


def run(args: argparse.Namespace) -> int:
    if args.watch:
        return watch(args)
    found = discover(args.agent)
    if args.limit:
        found = found[: args.limit]
    rows = [_row(item) for item in found]
    # Newest activity first: the log's own last timestamp when it has one, else the file's mtime.
    rows.sort(key=lambda row: str(row.get("last_activity") or row["modified"]), reverse=True)
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print("no sessions found")
        return 0
    width = max(16, *(len(row["agent"]) for row in rows))  # the longest agent name shown
    print(
        f"{'agent':<{width}} {'last activity':<20} {'model':<26} {'context':>9} {'(source)':<12}"
        f" {'fill':>6}  cwd / file"
    )
    for row in rows:
        if "error" in row:
            print(one_line(f"{row['agent']:<{width}} {row['modified'][:19]:<20} {row['error']}"))
            continue
        fill = "-" if row["fill_percent"] is None else f"{row['fill_percent']}%"
        line = (
            f"{row['agent']:<{width}} {str(row['last_activity'])[:19]:<20}"
            f" {(row['model'] or '-')[:26]:<26} {row['context_tokens']:>9,}"
            f" {'(' + row['context_source'] + ')':<12} {fill:>6}"
            f"  {row['cwd'] or '-'}  {row['file']}"
        )
        print(one_line(line))  # log text and file names: shown, never obeyed; one line a row
    return 0


def _shown(ordered: list[Any], args: argparse.Namespace) -> list[Any]:
    """The rows whose full figures ``--watch`` shows: those that fit the terminal, or with
    ``--json`` the first ``--limit`` (0: all); the others have their quick figures."""
    if args.json:
        return ordered[: args.limit] if args.limit else ordered
    import shutil

    return ordered[: shutil.get_terminal_size((160, 50)).lines]


def watch(args: argparse.Namespace) -> int:
    """The live sessions table, refreshed in place (``--json``: one JSON array a line per
    refresh) until interrupted (ctrl+c: exit 130, as ``main`` gives any interrupt)."""
    import shutil
    import sys
    import time

    from ctxtop.engine.config import load_settings
    from ctxtop.engine.live.sessions_table import SessionsTable
    from ctxtop.engine.live.sessions_text import clip_to_height, sort_rows, text_table
    from ctxtop.engine.live.sessions_watch import watch_rows

    settings = load_settings()
    minutes = args.minutes or settings.active_minutes
    table = SessionsTable(active_minutes=minutes, agent=args.agent, settings=settings)
    in_place = sys.stdout.isatty() and not args.json
    for rows in watch_rows(table):
        ordered = sort_rows(rows)
        table.show(row.key for row in _shown(ordered, args))
        if args.json:
            print(json.dumps([row.to_json() for row in ordered], ensure_ascii=False), flush=True)
        else:
            size = shutil.get_terminal_size((160, 50))
            lines = text_table(ordered, time.time(), size.columns)
            if in_place:  # a taller table would scroll the title away
                lines = clip_to_height(lines, size.lines)
            title = (
                f"ctxtop sessions: {len(ordered)} active in the last {minutes:g} min (ctrl+c: quit)"
            )
            # Home, the table, then clear what an older, longer table left below it.
            text = "\n".join([title, *lines])
            print("\x1b[H" + text + "\x1b[J" if in_place else text + "\n", flush=True)
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "sessions", help="list agent sessions found on this machine", description=__doc__
    )
    parser.add_argument("--agent", choices=[cls.agent for cls in ADAPTERS], help="one agent only")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--limit",
        type=int,
        default=50,
        help="at most this many sessions (0: all; default 50); with --watch --json: the rows"
        " with full figures (the others: quick ones from the newest bytes)",
    )
    parser.add_argument(
        "--watch",
        action="store_true",
        help="the live table of sessions active lately, refreshed in place (ctrl+c: quit)",
    )
    parser.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="with --watch: sessions written in the last N minutes (default: the settings'"
        " active_minutes, 30)",
    )
    parser.set_defaults(func=run)

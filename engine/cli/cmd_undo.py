"""``ctxtop undo``: list the forks ``ctxtop edit``, ``compact`` and ``restore`` wrote, and remove
one (the newest by default).

Only files ctxtop created are removed: of its own naming, where it wrote them, with the size
and hash it logged, carrying ctxtop's fork mark for their session; anything else is refused,
``--force`` included. A fork the agent has since
appended to is kept unless ``--force``. A fork whose action line is missing (ctxtop was killed
just after writing it) is listed as "unlogged" and can be undone the same way. Every undo is
recorded in the action log.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ctxtop.engine.agents import names_fork, undo_note
from ctxtop.engine.editing import action_log
from ctxtop.engine.editing.undo import remove_temps_of_unlogged, undo


def _listed(entry: dict[str, Any]) -> str:
    kind = entry.get("kind", "edit")
    if kind == action_log.UNLOGGED:
        what = entry.get("fork") or f"{len(entry['files'])} large-result files, no fork"
        return (
            f"{entry['id']}  {kind:8}  {entry['time']}  {what}  (ctxtop stopped before logging "
            f"it: not in the log, written by ctxtop; ctxtop undo {entry['id']} removes it)"
        )
    return (
        f"{entry['id']}  {kind:8}  {entry['time']}  {entry['fork']}  "
        f"({entry.get('tokens_before')} -> {entry.get('tokens_after')} tokens)"
    )


def run(args: argparse.Namespace) -> int:
    remove_temps_of_unlogged()  # what a killed ctxtop left half-written
    if args.list:
        forks = action_log.live_forks()
        if args.json:
            print(json.dumps(forks, ensure_ascii=False, indent=2))
        elif not forks:
            print("no forks written by ctxtop edit, compact or restore")
        else:
            for entry in forks:
                print(_listed(entry))
        return 0
    outcome = undo(args.action, force=args.force, fork_named=names_fork)
    outcome["note"] = undo_note(outcome["agent"], outcome["session_id"])
    if args.json:
        print(json.dumps(outcome, ensure_ascii=False, indent=2))
    else:
        state = "removed" if outcome["removed"] else "already gone"
        files = len(outcome["removed_files"])
        extra = f"; {files} large-result files removed" if files else ""
        print(f"{outcome['fork']}: {state} ({outcome['kind']} {outcome['edit_id']}){extra}")
        if outcome["note"]:
            print(outcome["note"])
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "undo",
        help="list or remove forks written by ctxtop edit, compact or restore",
        description=__doc__,
    )
    parser.add_argument("action", nargs="?", help="the action's id (or a prefix); default newest")
    parser.add_argument("--list", action="store_true", help="list the forks, remove nothing")
    parser.add_argument("--force", action="store_true", help="remove a fork the agent changed")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)

"""``ctxtop undo``: list the forks ``ctxtop edit`` and ``ctxtop compact`` wrote, and remove one
(the newest by default).

Only files ctxtop created are removed; a fork the agent has since appended to is kept unless
``--force``. Every undo is recorded in the action log.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from engine.editing import actions
from engine.editing.fork import undo


def run(args: argparse.Namespace) -> int:
    if args.list:
        forks = actions.live_forks()
        if args.json:
            print(json.dumps(forks, ensure_ascii=False, indent=2))
        elif not forks:
            print("no forks written by ctxtop edit or ctxtop compact")
        else:
            for entry in forks:
                kind = entry.get("kind", "edit")
                print(
                    f"{entry['id']}  {kind:7}  {entry['time']}  {entry['fork']}  "
                    f"({entry.get('tokens_before')} -> {entry.get('tokens_after')} tokens)"
                )
        return 0
    outcome = undo(args.action, force=args.force)
    if args.json:
        print(json.dumps(outcome, ensure_ascii=False, indent=2))
    else:
        state = "removed" if outcome["removed"] else "already gone"
        print(f"{outcome['fork']}: {state} ({outcome['kind']} {outcome['edit_id']})")
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "undo", help="list or remove forks written by ctxtop edit or compact", description=__doc__
    )
    parser.add_argument("action", nargs="?", help="the action's id (or a prefix); default newest")
    parser.add_argument("--list", action="store_true", help="list the forks, remove nothing")
    parser.add_argument("--force", action="store_true", help="remove a fork the agent changed")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)

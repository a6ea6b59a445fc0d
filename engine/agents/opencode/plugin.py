"""OpenCode, as ctxtop knows it (see engine/agents/base.py)."""

from __future__ import annotations

from ctxtop.engine.agents.base import Agent, ProxyUse, SessionFiles
from ctxtop.engine.agents.opencode.reader import OpenCodeAdapter

PLUGIN = Agent(
    OpenCodeAdapter,
    # A fork is an export file for `opencode import` in ctxtop's data directory (writer.py).
    "ctxtop.engine.agents.opencode.writer:OpenCodeWriter",
    "ctxtop.engine.agents.opencode.source:OpenCodeSource",
    # Sessions are rows of its database, named <database>/<session id> (rows.address).
    sessions=SessionFiles(
        "XDG_DATA_HOME",
        "~/.local/share",
        ("opencode/opencode*.db/ses_*",),
        find=OpenCodeAdapter.discover,
    ),
    fork_name=r"{id}\.json",
    # ctxtop never writes OpenCode's database: the copy `opencode import` made is the user's.
    undo_note="if you imported it, `opencode session delete {id}` removes OpenCode's copy",
    proxy=ProxyUse(
        "OpenCode",
        'opencode  (its provider\'s "options": {"baseURL": "{url}/v1"} in opencode.json)',
        session_headers=("x-session-id",),
    ),
)

"""OpenCode, as ctxtop knows it (see engine/agents/base.py)."""

from __future__ import annotations

from engine.agents.base import Agent, ProxyUse, SessionFiles
from engine.agents.opencode.reader import OpenCodeAdapter

PLUGIN = Agent(
    OpenCodeAdapter,
    # Sessions are rows of its database, named <database>/<session id> (rows.address).
    sessions=SessionFiles(
        "XDG_DATA_HOME",
        "~/.local/share",
        ("opencode/opencode*.db/ses_*",),
        find=OpenCodeAdapter.discover,
    ),
    proxy=ProxyUse(
        "OpenCode",
        'opencode  (its provider\'s "options": {"baseURL": "{url}/v1"} in opencode.json)',
        session_headers=("x-session-id",),
    ),
)

"""Pi, as ctxtop knows it (see engine/agents/base.py)."""

from __future__ import annotations

from ctxtop.engine.agents.base import Agent, SessionFiles
from ctxtop.engine.agents.pi.reader import PiAdapter
from ctxtop.engine.agents.pi.rules import RULE

PLUGIN = Agent(
    PiAdapter,
    "ctxtop.engine.agents.pi.writer:PiWriter",
    "ctxtop.engine.agents.pi.source:PiSource",
    auto_compact=RULE,
    # PI_CODING_AGENT_SESSION_DIR, or sessionDir in its settings.json, puts them flat elsewhere:
    # listed by the reader's own rule; the live table watches the default place.
    sessions=SessionFiles(
        "PI_CODING_AGENT_DIR", "~/.pi/agent", ("sessions/*/*.jsonl",), find=PiAdapter.discover
    ),
    fork_name=r"[0-9TZ-]{1,40}_{id}\.jsonl",
)

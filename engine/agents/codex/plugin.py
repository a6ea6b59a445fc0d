"""Codex CLI, as ctxtop knows it (see engine/agents/base.py)."""

from __future__ import annotations

from ctxtop.engine.agents.base import Agent, ProxyUse, SessionFiles
from ctxtop.engine.agents.codex.entries import INJECTED
from ctxtop.engine.agents.codex.reader import CodexAdapter, _is_spawned
from ctxtop.engine.agents.codex.rules import RULE

# The note Codex puts before its own summaries (on a line of its own).
SUMMARY_OPENING = "Another language model started to solve this problem"

PLUGIN = Agent(
    CodexAdapter,
    "ctxtop.engine.agents.codex.writer:CodexWriter",
    "ctxtop.engine.agents.codex.source:CodexSource",
    RULE,
    # Not the rollouts of spawned sub-agents: they show under their parent, and a dashboard
    # following the newest session must not jump to one.
    sessions=SessionFiles(
        "CODEX_HOME",
        "~/.codex",
        ("sessions/*/*/*/rollout-*.jsonl",),
        _is_spawned,
        listed=_is_spawned.sessions,
    ),
    fork_name=r"rollout-[0-9T:-]{1,40}-{id}\.jsonl",
    compacts_unread="ctxtop.engine.agents.codex.writer:is_codex",
    summary_openings=(SUMMARY_OPENING,),
    proxy=ProxyUse(
        "Codex",
        "OPENAI_BASE_URL={url}/v1 codex",
        session_headers=("session_id", "session-id"),  # 0.169: session-id; older: session_id
        standing=INJECTED,
    ),
)

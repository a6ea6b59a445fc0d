"""Claude Code, as ctxtop knows it (see engine/agents/base.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ctxtop.engine.agents.base import Agent, ProxyUse, SessionFiles
from ctxtop.engine.agents.claude_code.reader import ClaudeCodeAdapter
from ctxtop.engine.agents.claude_code.rules import RULE


def _subagent_file(path: Path) -> bool:
    """Claude Code 2.0.x keeps sub-agents' files beside the sessions; they are read with their
    parent."""
    return path.name.startswith("agent-")


_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_SESSION_IN_USER_ID = re.compile(rf"session_({_UUID})")


def _session_in_body(body: Any) -> str | None:
    """The session id (the name of its ``<session>.jsonl``) in a Messages body's
    ``metadata.user_id``: 2.1.x a JSON object with a ``session_id``, older releases
    ``user_<hash>_account_<uuid>_session_<uuid>``."""
    metadata = body.get("metadata") if isinstance(body, dict) else None
    user_id = metadata.get("user_id") if isinstance(metadata, dict) else None
    if not isinstance(user_id, str):
        return None
    found = _SESSION_IN_USER_ID.search(user_id)
    if found:
        return found.group(1)
    if user_id.startswith("{"):
        try:
            value = json.loads(user_id)
        except ValueError:
            return None
        session = value.get("session_id") if isinstance(value, dict) else None
        return session if isinstance(session, str) else None
    return None


PLUGIN = Agent(
    ClaudeCodeAdapter,
    "ctxtop.engine.agents.claude_code.writer:ClaudeCodeWriter",
    "ctxtop.engine.agents.claude_code.source:ClaudeCodeSource",
    RULE,
    sessions=SessionFiles(
        "CLAUDE_CONFIG_DIR", "~/.claude", ("projects/*/*.jsonl",), _subagent_file
    ),
    fork_name=r"{id}\.jsonl",
    summary_openings=("This session is being continued",),
    proxy=ProxyUse(
        "Claude Code",
        "ANTHROPIC_BASE_URL={url} claude",
        session_headers=("x-claude-code-session-id",),
        session_in_body=_session_in_body,
    ),
)

"""A session's context window with its agent's own rule (``session_window`` with the agent's
``cli_window``), for the code that has a session state but no reader at hand."""

from __future__ import annotations

from ctxtop.engine.agents import AGENTS
from ctxtop.engine.models.window import Window
from ctxtop.engine.sessions.limits import session_window
from ctxtop.engine.sessions.model import SessionState


def agent_window(state: SessionState | None, model: str | None = None) -> Window:
    """The window of ``state``'s session, its agent's rule looked up by the agent's name
    (``model``: the model when the state names none or is None)."""
    agent = AGENTS.get(state.agent) if state is not None else None
    return session_window(state, agent.reader.cli_window if agent is not None else None, model)

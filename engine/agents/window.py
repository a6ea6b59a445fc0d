"""A session's context window with its agent's own rule (``resolve_window`` with the agent's
``cli_window``), for the code that has a session state but no reader at hand."""

from __future__ import annotations

from engine.agents import AGENTS
from engine.models.window import Window, resolve_window
from engine.sessions.model import SessionState


def session_window(state: SessionState | None, model: str | None = None) -> Window:
    """The window of ``state``'s session (``model``: the model when the state names none or is
    None)."""
    model = (state.model if state is not None else None) or model
    agent = AGENTS.get(state.agent) if state is not None else None
    cli = agent.reader.cli_window(model) if agent is not None else None
    return resolve_window(model, state.context_window if state is not None else None, cli)

"""openai_messages: everything ctxtop knows of this agent (see engine/agents/base.py)."""

from ctxtop.engine.agents.openai_messages.plugin import PLUGIN

__all__ = ["PLUGIN"]

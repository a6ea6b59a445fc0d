"""OpenCode: everything ctxtop knows of this agent (see engine/agents/base.py)."""

from ctxtop.engine.agents.opencode.plugin import PLUGIN

__all__ = ["PLUGIN"]

"""claude_code: everything ctxtop knows of this agent (see engine/agents/base.py)."""

from ctxtop.engine.agents.claude_code.plugin import PLUGIN

__all__ = ["PLUGIN"]

"""gemini_cli: everything ctxtop knows of this agent (see engine/agents/base.py)."""

from ctxtop.engine.agents.gemini_cli.plugin import PLUGIN

__all__ = ["PLUGIN"]

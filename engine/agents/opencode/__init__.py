"""opencode: everything ctxtop knows of this agent (see engine/agents/base.py)."""

"""VS Code Copilot Chat: its chat sessions' mutation logs (see engine/agents/base.py)."""

from ctxtop.engine.agents.vscode_copilot.plugin import PLUGIN

__all__ = ["PLUGIN"]

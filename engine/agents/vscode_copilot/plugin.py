"""VS Code Copilot Chat, as ctxtop knows it (see engine/agents/base.py)."""

from __future__ import annotations

from ctxtop.engine.agents.base import Agent, SessionFiles
from ctxtop.engine.agents.vscode_copilot.places import CONFIG_DEFAULT, CONFIG_VARIABLE, PATTERNS
from ctxtop.engine.agents.vscode_copilot.reader import VSCodeCopilotAdapter

# No fork writer: VS Code cannot run here, so no test could show it resuming a fork ctxtop wrote.
# No proxy: Copilot Chat sends its own models' requests to GitHub's Copilot API; only the
# undocumented ``github.copilot.advanced.debug.overrideCapiUrl`` moves them, to a server that
# must speak that API (token exchange, model list), which ``ctxtop proxy`` does not.
PLUGIN = Agent(
    VSCodeCopilotAdapter,
    # Every VS Code (stable, Insiders, VSCodium) on every system's place: the reader's own list.
    sessions=SessionFiles(
        CONFIG_VARIABLE, CONFIG_DEFAULT, PATTERNS, find=VSCodeCopilotAdapter.discover
    ),
)

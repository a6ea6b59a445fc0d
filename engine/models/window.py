"""The one choice of a session's context window, and where it comes from.

A window the agent states wins over any table: first what its log states (``logged``: Codex's
``model_context_window``, Copilot CLI's ``tokenLimit``, Claude Code's 1M-window beta), then what
its CLI uses for the model by its own rule when the log is silent (``cli``: Gemini CLI's
``tokenLimit``), then the registry (the user's file, a "[1m]" id, the genai-prices dataset), and
last the assumed default, which every view labels "window unknown".
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxtop.engine.models.registry import lookup as model_info

LOGGED = "logged"
CLI = "cli"
# The window the user asks the analysis to assume (``b`` on the dashboard, ``--budget``).
WHAT_IF = "what-if"


@dataclass(frozen=True, slots=True)
class Window:
    """A context window and its source: ``logged``, ``cli``, ``user file``, ``model id``,
    ``dataset`` or ``assumed`` (no source knows the model: the assumed default), or ``what-if``
    (a window the user asks the analysis to assume)."""

    tokens: int
    source: str

    @property
    def assumed(self) -> bool:
        return self.source == "assumed"


def resolve_window(model: str | None, logged: int | None = None, cli: int | None = None) -> Window:
    """The window of ``model``: ``logged`` (the agent's log states it), else ``cli`` (the agent's
    own rule for the model), else the registry's, marked with its source."""
    if logged is not None:
        return Window(logged, LOGGED)
    if cli is not None:
        return Window(cli, CLI)
    info = model_info(model)
    return Window(info.context_window, info.window_source)


def unknown_window_note(window: Window) -> str | None:
    """The words every view shows beside a window no source knows (None for a known one)."""
    if not window.assumed:
        return None
    return f"window unknown, assuming {window.tokens // 1000}k"

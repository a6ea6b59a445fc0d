"""A session's limits, each decided here once for every view that shows it: the sample (report,
dashboard, sessions table, statusline), the analysis, forks and the strategies ``ctxtop
compact`` compares.

- ``session_window``: the context window and its source (engine/models/window.py's words);
- ``autocompact_point``: where the agent compacts by itself, its rule applied to that window
  (under another agent's layout profile, a what-if, that profile's ``autocompact`` setting);
- ``trigger_points``: ctxtop's editing and compaction triggers in tokens;
- ``fill_level``: ok, warning or critical, as the gauge, the sessions table and the statusline
  colour or mark a fill.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ctxtop.engine.config import Thresholds
from ctxtop.engine.models.window import Window, resolve_window
from ctxtop.engine.sessions.model import SessionState

# The agent's own window for a model when its log states none (``Adapter.cli_window``).
WindowRule = Callable[[str | None], int | None]
# The agent's auto-compact point for a window (``Adapter.autocompact_at``).
AutocompactRule = Callable[[int], int | None]

OK, WARNING, CRITICAL = "ok", "warning", "critical"
# A layout profile's ``autocompact`` setting (engine/analysis/profiles.py) for an agent that never
# compacts by itself (``agent``: at the session's rule).
NO_AUTOCOMPACT = "none"


def session_window(
    state: SessionState | None, rule: WindowRule | None = None, model: str | None = None
) -> Window:
    """The window of ``state``'s session: the one its log states, else the agent's ``rule`` for
    its model, else the model registry's (``model``: the model when the state names none, e.g.
    a sub-agent's parent's, or when there is no state)."""
    model = (state.model if state is not None else None) or model
    logged = state.context_window if state is not None else None
    return resolve_window(model, logged, rule(model) if rule is not None else None)


def autocompact_point(
    rule: AutocompactRule, window: int | None, what_if_profile: str | None = None
) -> int | None:
    """The prompt size at which the agent compacts by itself in ``window`` (None: it does not,
    or the window is unknown). ``what_if_profile``: the ``autocompact`` setting of another
    agent's layout profile the session is analysed with, which says whether that agent compacts
    at the session's rule or not at all (``none``: Copilot Chat prunes instead). The agent's own
    profile, a user's replacement of it included, never drops the agent's rule (its settings
    turn it off)."""
    if what_if_profile == NO_AUTOCOMPACT:
        return None
    return rule(window) if window else None


@dataclass(frozen=True, slots=True)
class TriggerPoints:
    """ctxtop's triggers in tokens: past ``editing_at`` it suggests clean-ups, past
    ``compaction_at`` compacting."""

    editing_at: int
    compaction_at: int


def trigger_points(window: int, thresholds: Thresholds) -> TriggerPoints:
    """The triggers of ``thresholds`` (fractions) in a window of ``window`` tokens."""
    return TriggerPoints(int(window * thresholds.editing), int(window * thresholds.compaction))


def fill_level(tokens: int, points: TriggerPoints, autocompact_at: int | None = None) -> str:
    """``critical`` past the compaction trigger or the agent's auto-compact point, ``warning``
    past the editing trigger, else ``ok``."""
    if tokens >= points.compaction_at or (autocompact_at is not None and tokens >= autocompact_at):
        return CRITICAL
    return WARNING if tokens >= points.editing_at else OK

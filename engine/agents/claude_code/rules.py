"""Claude Code's auto-compact rule: where it compacts on its own (the reader's
``autocompact_at``) and its entry in the strategies ``ctxtop compact`` compares."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from engine.agents.base import AutoCompact, AutoCompactRule

# Auto-compact rule, agent-log-formats.md §1.6 (cc2.1.112 ``Yn``/``v38``/``UM6``):
#   effectiveWindow = window - min(maxOutputTokens, 20000); threshold = effectiveWindow - 13000.
AUTOCOMPACT_OUTPUT_RESERVE_CAP = 20_000
AUTOCOMPACT_BUFFER = 13_000


def claude_autocompact_at(
    context_window: int, model: str | None, env: Mapping[str, str]
) -> int | None:
    """The prompt size at which Claude Code compacts on its own (None when it is disabled).

    effectiveWindow = window - min(maxOutputTokens, 20000); threshold = effectiveWindow - 13000;
    ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` replaces the window, ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=p``
    gives min(floor(effectiveWindow * p / 100), threshold), ``DISABLE_AUTO_COMPACT`` /
    ``DISABLE_COMPACT`` turn it off (cc2.1.112 ``Yn``, ``v38``, ``UM6``).
    """
    from engine.models.registry import lookup as model_info

    if env.get("DISABLE_AUTO_COMPACT") or env.get("DISABLE_COMPACT"):
        return None
    window_override = env.get("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "")
    if window_override.isdigit() and int(window_override) > 0:
        context_window = int(window_override)
    max_output = model_info(model).max_output
    effective = context_window - min(max_output, AUTOCOMPACT_OUTPUT_RESERVE_CAP)
    threshold = effective - AUTOCOMPACT_BUFFER
    try:
        percent = float(env.get("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", ""))
    except ValueError:
        return threshold
    if 0 < percent <= 100:
        return min(int(effective * percent / 100), threshold)
    return threshold


def _strategy(window: int, model: str | None, env: Mapping[str, str], home: Path) -> AutoCompact:
    at = claude_autocompact_at(window, model, env)
    return AutoCompact(
        at,
        "summarise the whole conversation, then re-attach recently read files",
        "compact" if at is not None else "never: auto-compact off",
    )


RULE = AutoCompactRule("Claude Code", _strategy)

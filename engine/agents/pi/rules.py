"""Pi's auto-compaction as ``ctxtop compact`` compares it: when the last answer's tokens exceed
the window less ``compaction.reserveTokens`` (0.73.1 ``shouldCompact``), from the settings of
its agent directory."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ctxtop.engine.agents.base import AutoCompact, AutoCompactRule
from ctxtop.engine.agents.pi.settings import global_compaction


def _strategy(window: int, model: str | None, env: Mapping[str, str], home: Path) -> AutoCompact:
    settings = global_compaction(env, home)
    return AutoCompact(
        max(window - settings.reserve_tokens, 0) if settings.enabled else None,
        "summarise the history before the newest ~keepRecentTokens, keeping those",
        "compact",
        {"source": settings.source, "reserve_tokens": settings.reserve_tokens},
    )


RULE = AutoCompactRule("Pi", _strategy)

"""Qwen Code's auto-compression as ``ctxtop compact`` compares it: ``min(pct × window,
window − 33,000)`` with ``context.autoCompactThreshold`` of its user settings (see
``settings``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ctxtop.engine.agents.base import AutoCompact, AutoCompactRule
from ctxtop.engine.agents.qwen_code.settings import compress_at, qwen_dir, threshold


def _strategy(window: int, model: str | None, env: Mapping[str, str], home: Path) -> AutoCompact:
    pct, source = threshold(qwen_dir(env, home), None)
    return AutoCompact(
        compress_at(window, pct),
        "replace the history with a <state_snapshot> summary and the newest messages",
        "compact",
        {"source": source, "threshold": pct},
    )


RULE = AutoCompactRule("Qwen Code", _strategy)

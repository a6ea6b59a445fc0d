"""Codex's auto-compact strategy as ``ctxtop compact`` compares it:
``model_auto_compact_token_limit`` from its config.toml, else 90 % of the window. (The reader's
``autocompact_at`` is the finer rule for a rollout, from the window Codex logged.)"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path

from ctxtop.engine.agents.base import AutoCompact, AutoCompactRule
from ctxtop.engine.files import open_regular

DEFAULT_SHARE = 0.90


def codex_limit(env: Mapping[str, str], home: Path) -> int | None:
    """``model_auto_compact_token_limit`` from Codex's config.toml, if set."""
    root = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
    try:
        with open(open_regular(root / "config.toml"), "rb") as handle:  # never a pipe
            config = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    value = config.get("model_auto_compact_token_limit")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _strategy(window: int, model: str | None, env: Mapping[str, str], home: Path) -> AutoCompact:
    configured = codex_limit(env, home)
    return AutoCompact(
        configured if configured is not None else int(window * DEFAULT_SHARE),
        "replace the history with a summary and the recent user messages",
        "compact",
        {"source": "config.toml" if configured is not None else "default (90 % of window)"},
    )


RULE = AutoCompactRule("Codex", _strategy)

"""Where Qwen Code keeps its files and when it compresses (0.24.4, ``Storage`` and
``chatCompressionService`` in the npm bundle; QwenLM/qwen-code ``packages/core/src/config/
storage.ts``, ``services/chatCompressionService.ts``).

- Its directory is ``$QWEN_HOME`` (default ``~/.qwen``); the sessions go under the runtime
  directory, ``$QWEN_RUNTIME_DIR`` when set, else that one:
  ``projects/<cwd, each character not a letter or digit as "-">/chats/<sessionId>.jsonl``.
- It compresses when the next prompt (the last one reported, its answer and the new message)
  reaches ``min(pct × window, window − 20,000 − 13,000)`` (the proportional share alone when the
  window is under 33,000), ``pct`` being ``context.autoCompactThreshold`` (0 < pct ≤ 1) of its
  settings.json, the project's ``<cwd>/.qwen/settings.json`` over the user's, else 0.85.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

from ctxtop.engine.files import read_json_object

DEFAULT_PCT = 0.85
SUMMARY_RESERVE = 20_000  # COMPACT_MAX_OUTPUT_TOKENS
AUTOCOMPACT_BUFFER = 13_000
SETTINGS_LIMIT = 1 << 20


def _expand(value: str, home: Path) -> Path:
    if value == "~" or value.startswith(("~/", "~\\")):
        return home / value[2:]
    return Path(value)


def qwen_dir(env: Mapping[str, str], home: Path) -> Path:
    value = env.get("QWEN_HOME")
    return _expand(value, home) if value else home / ".qwen"


def runtime_dir(env: Mapping[str, str], home: Path) -> Path:
    value = env.get("QWEN_RUNTIME_DIR")
    return _expand(value, home) if value else qwen_dir(env, home)


def _threshold(settings: Path) -> float | None:
    context = read_json_object(settings, SETTINGS_LIMIT).get("context")
    value = context.get("autoCompactThreshold") if isinstance(context, dict) else None
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= 1:
        return float(value)
    return None


def threshold(user_dir: Path | None, cwd: str | None) -> tuple[float, str]:
    """``context.autoCompactThreshold`` in force and the file that set it (else the default)."""
    places = [Path(cwd) / ".qwen" / "settings.json" if cwd else None]
    places.append(user_dir / "settings.json" if user_dir is not None else None)
    for place in places:
        value = _threshold(place) if place is not None else None
        if value is not None:
            return value, str(place)
    return DEFAULT_PCT, "default"


def compress_at(window: int, pct: float) -> int:
    """Qwen Code's ``computeThresholds(window, pct).auto``, rounded up to whole tokens."""
    proportional = pct * window
    ceiling = max(0, window - SUMMARY_RESERVE) - AUTOCOMPACT_BUFFER
    return math.ceil(min(proportional, ceiling) if ceiling > 0 else proportional)

"""Claude Code's auto-compact rule: where it compacts on its own (the reader's
``autocompact_at``) and its entry in the strategies ``ctxtop compact`` compares.

As Claude Code 2.1.332 computes it (its bundle: ``XS`` resolves the auto-compact window, ``gse``
the effective window, ``QG`` the threshold, ``_m`` whether auto-compact is on):

- window: the model's context window, capped by ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` (``200k``,
  ``1m`` or a number; below 100k reads as 100k; unusable text is ignored), else by the
  ``autoCompactWindow`` setting (a number, or "auto" for no cap; ``modelSettings.<model>
  .autoCompactWindow`` for one model);
- effective window = window − min(the model's max output, 20,000); threshold = effective − 13,000;
- ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=p`` (0 < p ≤ 100) only lowers it: min(⌊effective·p/100⌋,
  threshold);
- off when ``DISABLE_AUTO_COMPACT`` or ``DISABLE_COMPACT`` is set, or ``autoCompactEnabled`` is
  false in the settings (``~/.claude/settings.json``, the project's ``.claude/settings.json`` and
  ``.claude/settings.local.json``, later ones winning) or in the legacy ``~/.claude.json``.

The prompt cache's lifetime (``claude_cache_ttl``): ``FORCE_PROMPT_CACHING_5M`` keeps it at 5
minutes, else the ``promptCacheTtl`` setting ("5m" or "1h"), else ``ENABLE_PROMPT_CACHING_1H``
asks for an hour; the variables are read from the environment and the settings' ``env`` blocks.
Without any of them Claude Code picks by plan and query source, which no file shows.

Server-side experiments and per-account windows (``clientdata``) also move the point in the CLI;
they are not in any file ctxtop can read.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxtop.engine.agents.base import AutoCompact, AutoCompactRule
from ctxtop.engine.files import open_regular

AUTOCOMPACT_OUTPUT_RESERVE_CAP = 20_000  # kfo
AUTOCOMPACT_BUFFER = 13_000  # $Ue
MIN_AUTO_COMPACT_WINDOW = 100_000  # iF: smaller configured windows read as this
WITHOUT_1M_WINDOW = 200_000  # nDt: the window under CLAUDE_CODE_DISABLE_1M_CONTEXT
_TRUE = ("1", "true", "yes", "on")
CACHE_TTLS = {"5m": 300.0, "1h": 3600.0}
_LEADING_NUMBER = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def env_flag(env: Mapping[str, str], name: str) -> bool:
    """An environment switch as Claude Code reads one ("1", "true", "yes", "on")."""
    return env.get(name, "").strip().lower() in _TRUE


def parse_window(text: str | None) -> int | None:
    """``CLAUDE_CODE_AUTO_COMPACT_WINDOW``: "200k", "1m" or a token count (None: unset or
    unusable; under 100k reads as 100k)."""
    if text is None:
        return None
    value = text.strip()
    scale = {"k": 1_000, "m": 1_000_000}.get(value[-1:].lower())
    try:
        number = float(value[:-1] if scale else value) * (scale or 1)
    except ValueError:
        return None
    if not math.isfinite(number) or round(number) < 1:
        return None
    return max(round(number), MIN_AUTO_COMPACT_WINDOW)


def _percent(text: str | None) -> float | None:
    # JavaScript's parseFloat: the leading number ("50%" is 50).
    match = _LEADING_NUMBER.match(text or "")
    if match is None:
        return None
    percent = float(match.group(0))
    return percent if 0 < percent <= 100 else None


@dataclass(frozen=True, slots=True)
class ClaudeSettings:
    """What Claude Code's settings files say about auto-compaction."""

    auto_compact_enabled: bool | None = None  # None: not set anywhere (on by default)
    auto_compact_window: int | str | None = None  # tokens, or "auto"
    per_model: Mapping[str, int | str] = field(default_factory=dict)
    files: tuple[str, ...] = ()  # the files read, lowest precedence first
    prompt_cache_ttl: str | None = None  # "5m" or "1h" (``promptCacheTtl``)
    env: Mapping[str, str] = field(default_factory=dict)  # the files' ``env`` blocks, merged

    def window_for(self, model: str | None) -> int | None:
        """The configured window cap for ``model`` (None: "auto" or not set)."""
        name = (model or "").removesuffix("[1m]")
        value = self.per_model.get(name, self.auto_compact_window)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return max(int(value), MIN_AUTO_COMPACT_WINDOW) if value >= 1 else None


def config_root(env: Mapping[str, str], home: Path) -> Path:
    return Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"


def settings_files(env: Mapping[str, str], home: Path, cwd: str | Path | None) -> list[Path]:
    """Claude Code's settings files, lowest precedence first."""
    files = [config_root(env, home) / "settings.json"]
    if cwd:
        project = Path(cwd) / ".claude"
        files += [project / "settings.json", project / "settings.local.json"]
    return files


# Settings files read so far, by path, with the size and time they had: every sample of every
# session asks, and the files rarely change.
_READ: dict[Path, tuple[tuple[int, int], dict[str, Any] | None]] = {}


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        stat = path.stat()
    except (OSError, ValueError):  # ValueError: a NUL in a path the log gave (its cwd)
        return None
    key = (stat.st_size, stat.st_mtime_ns)
    known = _READ.get(path)
    if known is not None and known[0] == key:
        return known[1]
    try:
        with open(open_regular(path), "rb") as handle:  # never a pipe or a device
            document = json.load(handle)
    except (OSError, ValueError, UnicodeDecodeError):
        document = None
    found = document if isinstance(document, dict) else None
    if len(_READ) > 256:
        _READ.clear()
    _READ[path] = (key, found)
    return found


def _window_value(value: Any) -> int | str | None:
    if value == "auto":
        return "auto"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    return None


def read_settings(paths: Iterable[Path], legacy: Path | None = None) -> ClaudeSettings:
    """The settings of ``paths`` merged as Claude Code merges them (``K$n``): a file that sets
    ``autoCompactWindow`` replaces the earlier default and per-model windows; per-model windows
    of a file that does not are added. ``legacy``: the old global config, read for
    ``autoCompactEnabled`` when no settings file sets it."""
    enabled: bool | None = None
    default: int | str | None = None
    per_model: dict[str, int | str] = {}
    read: list[str] = []
    cache_ttl: str | None = None
    env: dict[str, str] = {}
    for path in paths:
        document = _read_json(path)
        if document is None:
            continue
        read.append(str(path))
        if document.get("promptCacheTtl") in CACHE_TTLS:
            cache_ttl = document["promptCacheTtl"]
        block = document.get("env")
        if isinstance(block, dict):
            env.update({str(k): str(v) for k, v in block.items() if isinstance(v, str | int)})
        if isinstance(document.get("autoCompactEnabled"), bool):
            enabled = document["autoCompactEnabled"]
        models = document.get("modelSettings")
        mine = {
            name: value
            for name, entry in (models.items() if isinstance(models, dict) else ())
            if isinstance(entry, dict)
            and (value := _window_value(entry.get("autoCompactWindow"))) is not None
        }
        window = _window_value(document.get("autoCompactWindow"))
        if window is not None:
            default, per_model = window, mine
        else:
            per_model = {**per_model, **mine}
    if enabled is None and legacy is not None:
        document = _read_json(legacy)
        if document is not None and isinstance(document.get("autoCompactEnabled"), bool):
            enabled = document["autoCompactEnabled"]
            read.insert(0, str(legacy))
    return ClaudeSettings(enabled, default, per_model, tuple(read), cache_ttl, env)


def claude_settings(env: Mapping[str, str], home: Path, cwd: str | Path | None) -> ClaudeSettings:
    """The settings a Claude Code session in ``cwd`` runs with (user, project, local)."""
    legacy = (Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home) / (
        ".claude.json"
    )
    return read_settings(settings_files(env, home, cwd), legacy)


def claude_cache_ttl(env: Mapping[str, str], settings: ClaudeSettings) -> float | None:
    """The prompt cache's lifetime the environment and settings choose, in seconds (None: they
    do not say); see the module's doc."""
    merged = {**env, **settings.env}  # Claude Code puts the settings' env into its own
    if env_flag(merged, "FORCE_PROMPT_CACHING_5M"):
        return CACHE_TTLS["5m"]
    if settings.prompt_cache_ttl is not None:
        return CACHE_TTLS[settings.prompt_cache_ttl]
    return CACHE_TTLS["1h"] if env_flag(merged, "ENABLE_PROMPT_CACHING_1H") else None


def claude_cli_window(model: str | None, env: Mapping[str, str]) -> int | None:
    """The window Claude Code itself takes for ``model`` when its environment says (2.1.332
    ``ik``): 200,000 under ``CLAUDE_CODE_DISABLE_1M_CONTEXT`` for a larger window;
    ``CLAUDE_CODE_MAX_CONTEXT_TOKENS`` for a model it does not recognise (here: one no source of
    ctxtop knows either). None: the model's own window."""
    from ctxtop.engine.models.registry import lookup as model_info

    info = model_info(model)
    if env.get("CLAUDE_CODE_DISABLE_1M_CONTEXT") and info.context_window > WITHOUT_1M_WINDOW:
        return WITHOUT_1M_WINDOW
    value = env.get("CLAUDE_CODE_MAX_CONTEXT_TOKENS", "").strip()
    if not value.isdigit() or int(value) <= 0 or not info.assumed:
        return None
    return int(value)


def claude_autocompact_at(
    context_window: int,
    model: str | None,
    env: Mapping[str, str],
    settings: ClaudeSettings | None = None,
) -> int | None:
    """The prompt size at which Claude Code compacts on its own (None when it is off); see the
    module's doc for the rule."""
    from ctxtop.engine.models.registry import lookup as model_info

    if env_flag(env, "DISABLE_AUTO_COMPACT") or env_flag(env, "DISABLE_COMPACT"):
        return None
    settings = settings or ClaudeSettings()
    if settings.auto_compact_enabled is False:
        return None
    configured = parse_window(env.get("CLAUDE_CODE_AUTO_COMPACT_WINDOW"))
    if configured is None:
        configured = settings.window_for(model)
    window = min(context_window, configured) if configured is not None else context_window
    max_output = model_info(model).max_output
    effective = window - min(max_output, AUTOCOMPACT_OUTPUT_RESERVE_CAP)
    threshold = effective - AUTOCOMPACT_BUFFER
    percent = _percent(env.get("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"))
    if percent is not None:
        return min(math.floor(effective * percent / 100), threshold)
    return threshold


def _strategy(window: int, model: str | None, env: Mapping[str, str], home: Path) -> AutoCompact:
    at = claude_autocompact_at(window, model, env, claude_settings(env, home, None))
    return AutoCompact(
        at,
        "summarise the whole conversation, then re-attach recently read files",
        "compact" if at is not None else "never: auto-compact off",
    )


RULE = AutoCompactRule("Claude Code", _strategy)

"""Pi's settings that decide where its sessions are and when it compacts (0.73.1
``dist/config.js``, ``dist/core/settings-manager.js``): the agent directory is
``$PI_CODING_AGENT_DIR``, else ``~/.pi/agent``; its ``settings.json`` holds ``sessionDir`` and
``compaction {enabled, reserveTokens, keepRecentTokens}``, which a project's
``<cwd>/.pi/settings.json`` overrides key by key."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxtop.engine.files import read_json_object

AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
# DEFAULT_COMPACTION_SETTINGS in dist/core/compaction/compaction.js.
DEFAULT_RESERVE_TOKENS = 16_384
SETTINGS_LIMIT = 1 << 20


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    enabled: bool = True
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    source: str = "default"  # the settings file that set them, or "default"


def _expand(value: str, home: Path) -> Path:
    """Pi's ``expandTildePath``: ``~`` and ``~/…`` are under the home directory."""
    if value == "~":
        return home
    if value.startswith("~/"):
        return home / value[2:]
    return Path(value)


def agent_dir(env: Mapping[str, str], home: Path) -> Path:
    value = env.get(AGENT_DIR_ENV)
    return _expand(value, home) if value else home / ".pi" / "agent"


def _read(path: Path) -> dict[str, Any]:
    return read_json_object(path, SETTINGS_LIMIT)


def session_dir_setting(root: Path, home: Path) -> Path | None:
    """``sessionDir`` of the agent directory's settings.json: sessions then lie flat in it."""
    value = _read(root / "settings.json").get("sessionDir")
    return _expand(value, home) if isinstance(value, str) and value else None


def _agent_dir_of(session: Path) -> Path | None:
    """The agent directory of a session at its default place (``<dir>/sessions/--cwd--/x``)."""
    if len(session.parents) > 2 and session.parents[1].name == "sessions":
        return session.parents[2]
    return None


def compaction_settings(session: Path, cwd: str | None) -> CompactionSettings:
    """The compaction settings in force for a session: the global ones of the agent directory
    that holds it, then the project's (``<cwd>/.pi/settings.json``) over them."""
    return _compaction([_agent_dir_of(session), Path(cwd) / ".pi" if cwd else None])


def global_compaction(env: Mapping[str, str], home: Path) -> CompactionSettings:
    """The compaction settings of the agent directory (no project's)."""
    return _compaction([agent_dir(env, home)])


def _compaction(places: list[Path | None]) -> CompactionSettings:
    enabled, reserve, source = True, DEFAULT_RESERVE_TOKENS, "default"
    for place in places:
        if place is None:
            continue
        settings = _read(place / "settings.json").get("compaction")
        if not isinstance(settings, dict):
            continue
        if isinstance(settings.get("enabled"), bool):
            enabled, source = settings["enabled"], str(place / "settings.json")
        value = settings.get("reserveTokens")
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            reserve, source = value, str(place / "settings.json")
    return CompactionSettings(enabled, reserve, source)

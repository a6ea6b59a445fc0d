"""Where ctxtop keeps its own files (never inside an agent's directories).

Each location honours an environment override so tests and users can relocate it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import platformdirs

APP_NAME = "ctxtop"
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}")


def is_plain_name(name: str) -> bool:
    """True for a name that is one path component and nothing else: no separator, no ``..``,
    no NUL or newline, not absolute (names from a log may be any of those)."""
    return bool(_PLAIN_NAME.fullmatch(name)) and ".." not in name


def _dir(env: str, default: str) -> Path:
    override = os.environ.get(env)
    return Path(override) if override else Path(default)


def config_dir() -> Path:
    """User settings, theme files and the model registry override (``CTXTOP_CONFIG_DIR``)."""
    return _dir("CTXTOP_CONFIG_DIR", platformdirs.user_config_dir(APP_NAME))


def cache_dir() -> Path:
    """The persistent token-count cache (``CTXTOP_CACHE_DIR``)."""
    return _dir("CTXTOP_CACHE_DIR", platformdirs.user_cache_dir(APP_NAME))


def data_dir() -> Path:
    """The action log and records of forks ctxtop wrote (``CTXTOP_DATA_DIR``)."""
    return _dir("CTXTOP_DATA_DIR", platformdirs.user_data_dir(APP_NAME))

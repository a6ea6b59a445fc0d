"""Where VS Code keeps chat sessions: under each installed product's user directory.

The user directory is ``<config>/<product>/User`` with ``<config>`` ``$XDG_CONFIG_HOME`` or
``~/.config`` on Linux, ``~/Library/Application Support`` on macOS, ``%APPDATA%`` on Windows, and
``<product>`` ``Code``, ``Code - Insiders`` or ``VSCodium`` (a portable install:
``$VSCODE_PORTABLE/user-data/User``). Below it, a workspace's sessions are
``workspaceStorage/<hash>/chatSessions/<id>.jsonl`` (``.json`` before VS Code 1.109) and an empty
window's ``globalStorage/emptyWindowChatSessions/<id>.jsonl``."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

PRODUCTS = ("Code", "Code - Insiders", "VSCodium")
# Below a user directory (one part per level).
SESSION_GLOBS = (
    "workspaceStorage/*/chatSessions/*.jsonl",
    "workspaceStorage/*/chatSessions/*.json",
    "globalStorage/emptyWindowChatSessions/*.jsonl",
    "globalStorage/emptyWindowChatSessions/*.json",
)

if sys.platform == "darwin":
    CONFIG_VARIABLE: str | None = None
    CONFIG_DEFAULT = "~/Library/Application Support"
elif sys.platform == "win32":
    CONFIG_VARIABLE, CONFIG_DEFAULT = "APPDATA", "~/AppData/Roaming"
else:
    CONFIG_VARIABLE, CONFIG_DEFAULT = "XDG_CONFIG_HOME", "~/.config"

# Below this system's configuration directory, for the live sessions table.
PATTERNS = tuple(f"{product}/User/{glob}" for product in PRODUCTS for glob in SESSION_GLOBS)


def config_dirs(env: Mapping[str, str], home: Path) -> list[Path]:
    """Every place a VS Code user directory's parent may be, this system's first."""
    linux = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
    windows = Path(env["APPDATA"]) if env.get("APPDATA") else home / "AppData" / "Roaming"
    mac = home / "Library" / "Application Support"
    ordered = {"darwin": [mac, linux, windows], "win32": [windows, linux, mac]}
    return ordered.get(sys.platform, [linux, mac, windows])


def user_dirs(env: Mapping[str, str], home: Path) -> Iterator[Path]:
    if env.get("VSCODE_PORTABLE"):
        yield Path(env["VSCODE_PORTABLE"]) / "user-data" / "User"
    for config in config_dirs(env, home):
        for product in PRODUCTS:
            yield config / product / "User"


def session_files(env: Mapping[str, str], home: Path) -> Iterator[Path]:
    """Every chat session file of every VS Code found (a ``.json`` left beside the ``.jsonl``
    of the same session, as VS Code's migration does, is not listed twice)."""
    seen: set[Path] = set()
    for user in user_dirs(env, home):
        if user in seen or not user.is_dir():
            continue
        seen.add(user)
        found = [path for glob in SESSION_GLOBS for path in user.glob(glob)]
        logs = {path.with_suffix("") for path in found if path.suffix == ".jsonl"}
        yield from (p for p in found if p.suffix == ".jsonl" or p.with_suffix("") not in logs)


__all__ = ["CONFIG_DEFAULT", "CONFIG_VARIABLE", "PATTERNS", "session_files", "user_dirs"]

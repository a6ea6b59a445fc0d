"""Where OpenCode keeps its sessions and settings, and its own compaction rule.

From OpenCode's source (sst/opencode, 1.18): ``Global.Path.data`` is ``<xdgData>/opencode``
and its config directory ``<xdgConfig>/opencode``, where the ``xdg-basedir`` package takes
``XDG_DATA_HOME`` / ``XDG_CONFIG_HOME`` or else ``~/.local/share`` / ``~/.config`` on every
system (Windows included: ``%USERPROFILE%\\.local\\share``). The database is ``opencode.db``
there (the latest and beta channels; another channel writes ``opencode-<channel>.db``), or
the file ``OPENCODE_DB`` names (a relative name is taken in the data directory).

Auto-compaction (``session/overflow.ts``): after a step, when the step's ``tokens.total``
(input + output + reasoning + cache reads and writes) reaches the usable context:
``limit.input - reserved`` for a model with an input limit, else ``limit.context -
maxOutputTokens``, with ``maxOutputTokens = min(limit.output, 32000)`` (32000 when the model
sets no output limit) and ``reserved = compaction.reserved`` or ``min(20000, maxOutputTokens)``;
off with ``compaction.auto: false`` or a context limit of 0.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxtop.engine.agents.opencode.rows import connect, split_address, stamp
from ctxtop.engine.files import read_head

OUTPUT_TOKEN_MAX = 32_000
COMPACTION_BUFFER = 20_000
CONFIG_NAMES = ("opencode.jsonc", "opencode.json", "config.json")
_DATABASE = re.compile(r"opencode(-[A-Za-z0-9._-]+)?\.db")


def _home_dir(env: Mapping[str, str], variable: str, home: Path, *default: str) -> Path:
    value = env.get(variable)
    return Path(value) if value else home.joinpath(*default)


def data_dir(env: Mapping[str, str], home: Path) -> Path:
    return _home_dir(env, "XDG_DATA_HOME", home, ".local", "share") / "opencode"


def config_dir(env: Mapping[str, str], home: Path) -> Path:
    return _home_dir(env, "XDG_CONFIG_HOME", home, ".config") / "opencode"


def databases(env: Mapping[str, str], home: Path) -> list[Path]:
    """The session databases: ``OPENCODE_DB`` when set, else every channel's in the data
    directory."""
    data = data_dir(env, home)
    named = env.get("OPENCODE_DB")
    if named and named != ":memory:":
        return [Path(named) if Path(named).is_absolute() else data / named]
    try:
        return sorted(path for path in data.iterdir() if _DATABASE.fullmatch(path.name))
    except OSError:
        return []


def names_session(path: Path) -> bool:
    """Whether ``path`` is ``<an OpenCode database>/<session id>``."""
    found = split_address(path)
    return found is not None and found[0].name.endswith(".db") and found[1].startswith("ses_")


def database_of(path: Path) -> Path | None:
    """The OpenCode database a changed file is (itself, or its ``-wal``), else None."""
    name = path.name.removesuffix("-wal")
    return path.with_name(name) if _DATABASE.fullmatch(name) else None


def sessions_since(database: Path, since: float) -> list[tuple[str, float]]:
    """The top-level sessions of ``database`` updated since ``since`` (epoch seconds), with
    when (none when it cannot be read)."""
    try:
        connection = connect(database)
    except OSError:
        return []
    try:
        rows = connection.execute(
            "SELECT id, time_updated FROM session WHERE parent_id IS NULL AND time_updated >= ?",
            (int(since * 1000),),
        ).fetchall()
    except sqlite3.Error:
        return []
    finally:
        connection.close()
    return [(row[0], row[1] / 1000) for row in rows if isinstance(row[1], int)]


def session_ids(database: Path) -> list[str]:
    """The ids of the top-level sessions in ``database`` (sub-agents' are read with their
    parent), none when it cannot be read."""
    try:
        connection = connect(database)
    except OSError:
        return []
    try:
        rows = connection.execute("SELECT id FROM session WHERE parent_id IS NULL").fetchall()
    except sqlite3.Error:
        return []
    finally:
        connection.close()
    return [row[0] for row in rows if isinstance(row[0], str)]


def written(path: Path) -> tuple[float, int] | None:
    """When the session ``path`` names was last updated (epoch seconds, from its row) and the
    size of its database and WAL; None when it is not there."""
    found = split_address(path)
    if found is None:
        return None
    database, session_id = found
    try:
        connection = connect(database)
    except OSError:
        return None
    try:
        row = connection.execute(
            "SELECT max(time_updated) FROM session WHERE id = ? OR parent_id = ?",
            (session_id, session_id),
        ).fetchone()
    except sqlite3.Error:
        return None
    finally:
        connection.close()
    if row is None or not isinstance(row[0], int):
        return None
    sizes = stamp(database)
    return row[0] / 1000, sizes[0] + sizes[2]


@dataclass(frozen=True, slots=True)
class Limits:
    context: int | None = None
    input: int | None = None
    output: int | None = None


def _load_json(path: Path) -> Any:
    """A JSON or JSONC settings file (None when missing or unreadable)."""
    try:
        text = read_head(path, 1 << 20).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    # JSONC: drop // and /* */ comments outside strings, then trailing commas.
    stripped = re.sub(
        r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or "", text, flags=re.S
    )
    stripped = re.sub(r",(\s*[}\]])", r"\1", stripped)
    try:
        return json.loads(stripped)
    except ValueError:
        return None


def settings(env: Mapping[str, str], home: Path | None = None) -> list[Mapping[str, Any]]:
    """The global config files OpenCode reads (lowest precedence first): config.json,
    opencode.json, opencode.jsonc in its config directory, then the ``OPENCODE_CONFIG`` file."""
    home = Path.home() if home is None else home
    directory = config_dir(env, home)
    paths = [directory / name for name in reversed(CONFIG_NAMES)]
    if env.get("OPENCODE_CONFIG"):
        paths.append(Path(env["OPENCODE_CONFIG"]))
    found = [_load_json(path) for path in paths]
    return [document for document in found if isinstance(document, Mapping)]


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def model_limits(model: str | None, env: Mapping[str, str], home: Path | None = None) -> Limits:
    """``limit {context, input, output}`` of ``model`` (a model id, or ``provider/model``) as
    the user's config declares it (models.dev's catalogue is not read: the registry answers)."""
    if not model:
        return Limits()
    provider_id, _, model_id = model.rpartition("/")
    limits = Limits()
    for document in settings(env, home):
        providers = document.get("provider")
        if not isinstance(providers, Mapping):
            continue
        for name, provider in providers.items():
            if (provider_id and name != provider_id) or not isinstance(provider, Mapping):
                continue
            models = provider.get("models")
            entry = models.get(model_id) if isinstance(models, Mapping) else None
            limit = entry.get("limit") if isinstance(entry, Mapping) else None
            if isinstance(limit, Mapping):
                limits = Limits(
                    _count(limit.get("context")) or limits.context,
                    _count(limit.get("input")) or limits.input,
                    _count(limit.get("output")) or limits.output,
                )
    return limits


def _compaction(env: Mapping[str, str], home: Path | None) -> Mapping[str, Any]:
    merged: dict[str, Any] = {}
    for document in settings(env, home):
        section = document.get("compaction")
        if isinstance(section, Mapping):
            merged.update(section)
    return merged


def compaction_point(
    context_window: int, model: str | None, env: Mapping[str, str], home: Path | None = None
) -> int | None:
    """The ``tokens.total`` of a step at which OpenCode compacts (module text), None if never."""
    compaction = _compaction(env, home)
    if compaction.get("auto") is False or context_window <= 0:
        return None
    limits = model_limits(model, env, home)
    max_output = min(limits.output, OUTPUT_TOKEN_MAX) if limits.output else OUTPUT_TOKEN_MAX
    reserved = _count(compaction.get("reserved"))
    if limits.input:
        usable = limits.input - (
            reserved if reserved is not None else min(COMPACTION_BUFFER, max_output)
        )
    else:
        usable = context_window - max_output
    return max(usable, 0)

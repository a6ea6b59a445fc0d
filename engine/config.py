"""User settings: a YAML file in the config dir (``ctxtop config --path`` prints where).

Every key is optional; a missing or unreadable file means the defaults. Unknown keys are kept out
of the settings (and reported by ``ctxtop config``), never an error at start-up.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ctxtop.engine.errors import InputError
from ctxtop.engine.paths import config_dir
from ctxtop.engine.yaml_text import read_yaml_file

CONFIG_NAME = "config.yaml"
SHOWN_UNKNOWN = 10  # one warning per unknown key up to here, then one line for the rest


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Fill fractions of the window: past ``editing`` ctxtop suggests clean-ups, past
    ``compaction`` it suggests compacting; the gauge turns warning and critical there."""

    editing: float = 0.65
    compaction: float = 0.85


PROTOCOLS = ("openai", "anthropic")


@dataclass(frozen=True, slots=True)
class LLMSettings:
    """The model ``ctxtop compact --summarizer llm`` asks (OpenAI-compatible or Anthropic API).
    The key is never stored here: ``api_key_env`` names the variable that holds it."""

    base_url: str | None = None  # e.g. https://api.openai.com/v1 or https://api.anthropic.com
    model: str | None = None
    summary_model: str | None = None  # a cheaper model for summaries (default: ``model``)
    api_key_env: str | None = None  # default: OPENAI_API_KEY or ANTHROPIC_API_KEY
    protocol: str = "openai"
    timeout: float = 60.0  # seconds per request


@dataclass(frozen=True, slots=True)
class Settings:
    profile: str = "default"
    theme: str = "ctxtop-dark"
    refresh: float = 0.5  # seconds between polls when file notifications are unavailable
    # Sessions written within this many minutes are on the sessions table; with more than
    # one, ``ctxtop`` opens on it.
    active_minutes: float = 30.0
    thresholds: Thresholds = field(default_factory=Thresholds)
    llm: LLMSettings = field(default_factory=LLMSettings)
    unknown: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("unknown")
        return data


def config_path() -> Path:
    return config_dir() / CONFIG_NAME


def _fraction(value: Any, name: str, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise InputError(str(config_path()), f"{name} must be a fraction between 0 and 1")
    return float(value)


def _name(value: Any, key: str, where: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InputError(where, f"{key} must be a name (text)")
    return value


def parse_settings(data: Any, where: str = CONFIG_NAME) -> Settings:
    """Settings from the decoded YAML (a mapping, or None for an empty file)."""
    if data is None:
        return Settings()
    if not isinstance(data, dict):
        raise InputError(where, "the settings file must be a mapping of keys to values")
    # proxy: engine.proxy; live: engine.live.auto_live
    known = {"profile", "theme", "refresh", "active_minutes", "thresholds", "llm", "proxy", "live"}
    unknown = tuple(sorted(str(key) for key in data if key not in known))
    raw_thresholds = data.get("thresholds") or {}
    if not isinstance(raw_thresholds, dict):
        raise InputError(where, "thresholds must be a mapping (editing, compaction)")
    defaults = Thresholds()
    thresholds = Thresholds(
        editing=_fraction(raw_thresholds.get("editing"), "thresholds.editing", defaults.editing),
        compaction=_fraction(
            raw_thresholds.get("compaction"), "thresholds.compaction", defaults.compaction
        ),
    )
    if thresholds.editing > thresholds.compaction:
        raise InputError(where, "thresholds.editing must not be above thresholds.compaction")
    defaults_all = Settings()
    refresh = data.get("refresh", defaults_all.refresh)
    if isinstance(refresh, bool) or not isinstance(refresh, int | float) or refresh <= 0:
        raise InputError(where, "refresh must be a positive number of seconds")
    minutes = data.get("active_minutes", defaults_all.active_minutes)
    if isinstance(minutes, bool) or not isinstance(minutes, int | float) or minutes <= 0:
        raise InputError(where, "active_minutes must be a positive number of minutes")
    return Settings(
        llm=parse_llm(data.get("llm"), where),
        active_minutes=float(minutes),
        profile=_name(data.get("profile"), "profile", where) or defaults_all.profile,
        theme=_name(data.get("theme"), "theme", where) or defaults_all.theme,
        refresh=float(refresh),
        thresholds=thresholds,
        unknown=unknown,
    )


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be the LLM endpoint's base URL, or None: an http(s) URL with a host
    and a valid port (urllib would also open file:, ftp: and data: URLs)."""
    try:
        parts = urllib.parse.urlsplit(url)
        port_ok = parts.port is None or parts.port > 0  # .port raises on a bad port
    except ValueError as error:
        return f"not a valid URL ({error}): {url!r}"
    if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        return f"must be an http:// or https:// URL with a host, not {url!r}"
    return None


def parse_llm(raw: Any, where: str = CONFIG_NAME) -> LLMSettings:
    """The ``llm:`` block (a mapping; every key optional)."""
    if raw is None:
        return LLMSettings()
    if not isinstance(raw, dict):
        raise InputError(where, "llm must be a mapping (base_url, model, protocol, …)")

    def text(key: str) -> str | None:
        value = raw.get(key)
        if value is not None and not isinstance(value, str):
            raise InputError(where, f"llm.{key} must be text")
        return value or None

    protocol = text("protocol") or "openai"
    if protocol not in PROTOCOLS:
        raise InputError(where, f"llm.protocol must be {' or '.join(PROTOCOLS)}, not {protocol}")
    timeout = raw.get("timeout", LLMSettings().timeout)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise InputError(where, "llm.timeout must be a positive number of seconds")
    base_url = text("base_url")
    if base_url is not None and (problem := url_problem(base_url)):
        raise InputError(where, f"llm.base_url: {problem}")
    return LLMSettings(
        base_url=base_url,
        model=text("model"),
        summary_model=text("summary_model"),
        api_key_env=text("api_key_env"),
        protocol=protocol,
        timeout=float(timeout),
    )


def load_settings(path: Path | None = None) -> Settings:
    """The settings file's values over the defaults; an invalid file is an ``InputError``."""
    path = path or config_path()
    return parse_settings(read_config_data(path), str(path))


def read_config_data(path: Path | None = None) -> Any:
    """The settings file decoded (None when there is none); an unreadable, oversized or
    invalid file is an ``InputError``. Blocks other packages own (``proxy:``) are parsed by
    them."""
    path = path or config_path()
    return read_yaml_file(path, missing_ok=True)  # never waits on a named pipe


def settings_yaml(settings: Settings | None = None) -> str:
    """Settings as a YAML file (every key at its default when none are given)."""
    return yaml.safe_dump((settings or Settings()).to_dict(), sort_keys=False)

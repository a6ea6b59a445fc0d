"""The proxy's settings: the ``proxy:`` block of the settings file, then the environment.

```yaml
proxy:
  port: 8787
  upstreams:            # where each protocol goes; the providers' public APIs by default
    anthropic: https://api.anthropic.com
    openai: https://api.openai.com
    gemini: https://generativelanguage.googleapis.com
  max_request_mb: 64
  max_response_mb: 64
  connect_timeout: 10   # seconds to reach the upstream
  read_timeout: 300     # seconds the upstream may stay silent (before and between bytes)
  max_connections: 256  # client connections at once (fewer if the open-file limit is low)
  header_timeout: 30    # seconds a client may take to send a request's headers
  idle_timeout: 120     # seconds a kept-alive client connection may wait for its next request
```
``CTXTOP_PROXY_PORT``, ``CTXTOP_PROXY_ANTHROPIC_URL``, ``CTXTOP_PROXY_OPENAI_URL`` and
``CTXTOP_PROXY_GEMINI_URL`` override it.
"""

from __future__ import annotations

import os
import urllib.parse
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ctxtop.engine.config import SHOWN_UNKNOWN, config_path, read_config_data, url_problem
from ctxtop.engine.errors import CtxtopError, InputError
from ctxtop.engine.proxy.loopback import is_loopback_host
from ctxtop.engine.words import first_lines

DEFAULT_PORT = 8787
DEFAULT_UPSTREAMS = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com",
    "gemini": "https://generativelanguage.googleapis.com",
}
MB = 1024 * 1024
KEYS = (
    "port",
    "upstreams",
    "max_request_mb",
    "max_response_mb",
    "connect_timeout",
    "read_timeout",
    "max_connections",
    "header_timeout",
    "idle_timeout",
)


@dataclass(frozen=True, slots=True)
class ProxySettings:
    port: int = DEFAULT_PORT  # 0: any free port
    upstreams: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_UPSTREAMS))
    max_request_bytes: int = 64 * MB
    max_response_bytes: int = 64 * MB
    connect_timeout: float = 10.0
    read_timeout: float = 300.0
    max_connections: int = 256  # client connections open at once (engine/proxy/connections.py)
    header_timeout: float = 30.0  # seconds a client may take to send a request's headers
    idle_timeout: float = 120.0  # seconds a kept-alive connection may wait for its next request
    # What to warn of (each line names where it comes from): unknown keys, plain http to
    # another machine.
    notices: tuple[str, ...] = ()

    def with_upstreams(self, **urls: str) -> ProxySettings:
        return replace(self, upstreams={**self.upstreams, **urls})

    def as_config(self) -> dict[str, Any]:
        """The ``proxy:`` block that gives these settings (``ctxtop config`` shows it)."""
        return {
            "port": self.port,
            "upstreams": dict(self.upstreams),
            "max_request_mb": _in_mb(self.max_request_bytes),
            "max_response_mb": _in_mb(self.max_response_bytes),
            "connect_timeout": self.connect_timeout,
            "read_timeout": self.read_timeout,
            "max_connections": self.max_connections,
            "header_timeout": self.header_timeout,
            "idle_timeout": self.idle_timeout,
        }


def _in_mb(size: int) -> float | int:
    return size // MB if size % MB == 0 else size / MB


def _plain_http(name: str, url: str, where: str) -> str | None:
    """The warning for an upstream reached over plain http on another machine, or None."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or is_loopback_host(parts.hostname):
        return None
    return (
        f"{where}: proxy.upstreams.{name} is plain http to another machine ({parts.hostname}): "
        "the agent's requests and API keys would cross the network unencrypted"
    )


def _number(raw: dict[str, Any], key: str, default: float, where: str) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise InputError(where, f"proxy.{key} must be a positive number")
    return float(value)


def _count(raw: dict[str, Any], key: str, default: int, where: str) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InputError(where, f"proxy.{key} must be a positive whole number")
    return value


def port_number(value: Any, name: str) -> int:
    """``value`` as a port to listen on; ``CtxtopError`` naming ``name`` (``--port``) if not."""
    try:
        port = int(value)
    except (TypeError, ValueError):
        port = -1
    if isinstance(value, bool) or not 0 <= port <= 65535:
        raise CtxtopError(f"{name} must be a port number (0-65535), not {value!r}")
    return port


def _port(value: Any, where: str) -> int:
    try:
        return port_number(value, "proxy.port")
    except CtxtopError as error:
        raise InputError(where, str(error)) from None


def _upstream(name: str, url: Any, where: str) -> str:
    if name not in DEFAULT_UPSTREAMS:
        raise InputError(
            where, f"proxy.upstreams: unknown protocol {name!r} (anthropic, openai, gemini)"
        )
    if not isinstance(url, str) or (problem := url_problem(url)):
        raise InputError(
            where, f"proxy.upstreams.{name}: {problem if isinstance(url, str) else 'must be a URL'}"
        )
    return url.rstrip("/")


def parse_proxy(raw: Any, where: str) -> ProxySettings:
    """The ``proxy:`` block (a mapping; every key optional)."""
    if raw is None:
        return ProxySettings()
    if not isinstance(raw, dict):
        raise InputError(where, "proxy must be a mapping (port, upstreams, …)")
    ups = raw.get("upstreams") or {}
    if not isinstance(ups, dict):
        raise InputError(where, "proxy.upstreams must be a mapping (anthropic, openai, gemini)")
    defaults = ProxySettings()
    upstreams = {str(k): _upstream(str(k), v, where) for k, v in ups.items()}
    ignored = [f"unknown key 'proxy.{key}' ignored" for key in raw if key not in KEYS]
    shown = first_lines(ignored, SHOWN_UNKNOWN, "unknown key", "ignored")
    notices = [f"{where}: {line}" for line in shown]
    return ProxySettings(
        port=_port(raw.get("port", DEFAULT_PORT), where),
        upstreams={**DEFAULT_UPSTREAMS, **upstreams},
        max_request_bytes=int(
            _number(raw, "max_request_mb", defaults.max_request_bytes / MB, where) * MB
        ),
        max_response_bytes=int(
            _number(raw, "max_response_mb", defaults.max_response_bytes / MB, where) * MB
        ),
        connect_timeout=_number(raw, "connect_timeout", defaults.connect_timeout, where),
        read_timeout=_number(raw, "read_timeout", defaults.read_timeout, where),
        max_connections=_count(raw, "max_connections", defaults.max_connections, where),
        header_timeout=_number(raw, "header_timeout", defaults.header_timeout, where),
        idle_timeout=_number(raw, "idle_timeout", defaults.idle_timeout, where),
        notices=tuple(notices),
    )


def load_proxy_settings(path: Path | None = None) -> ProxySettings:
    """The settings file's ``proxy:`` block, then the ``CTXTOP_PROXY_*`` variables."""
    path = path or config_path()
    data = read_config_data(path)
    settings = parse_proxy(data.get("proxy") if isinstance(data, dict) else None, str(path))
    env_port = os.environ.get("CTXTOP_PROXY_PORT")
    if env_port:
        settings = replace(settings, port=_port(env_port, "CTXTOP_PROXY_PORT"))
    source = {name: str(path) for name in DEFAULT_UPSTREAMS}
    for name in DEFAULT_UPSTREAMS:
        if url := os.environ.get(var := f"CTXTOP_PROXY_{name.upper()}_URL"):
            settings = settings.with_upstreams(**{name: _upstream(name, url, var)})
            source[name] = var
    found = (_plain_http(name, url, source[name]) for name, url in settings.upstreams.items())
    notices = (*settings.notices, *(notice for notice in found if notice is not None))
    return replace(settings, notices=notices)

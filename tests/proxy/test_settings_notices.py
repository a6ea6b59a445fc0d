"""The proxy's settings say what they will not do: an unknown ``proxy:`` key (``host: 0.0.0.0``
was silently ignored) and a plain-http upstream on another machine (accepted without a word)
are warned of, naming where they come from; ``ctxtop config`` shows the ``proxy:`` and
``live:`` blocks in effect."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from test_command import run_ctxtop, write_config

from ctxtop.engine.proxy.settings import DEFAULT_UPSTREAMS, load_proxy_settings

UNENCRYPTED = "is plain http to another machine"


def test_an_unknown_proxy_key_is_named_when_the_proxy_starts(isolated_dirs: Path) -> None:
    path = write_config(isolated_dirs, "proxy:\n  host: 0.0.0.0\n  port: 0\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "ctxtop", "proxy"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ),
    )  # fmt: skip
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("ctxtop proxy on http://127.0.0.1:")
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    assert f"ctxtop: {path}: unknown key 'proxy.host' ignored\n" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("url", "warned"),
    [
        ("http://10.20.30.40:8080", True),
        ("http://models.example:80", True),
        ("https://models.example", False),
        ("http://127.0.0.1:9000", False),
        ("http://localhost:9000", False),
        ("http://[::1]:9000", False),
    ],
)
def test_plain_http_to_another_machine_is_accepted_with_a_warning(
    isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch, url: str, warned: bool
) -> None:
    path = write_config(isolated_dirs, f"proxy:\n  upstreams:\n    openai: {url}\n")
    settings = load_proxy_settings()
    assert settings.upstreams["openai"] == url
    assert [UNENCRYPTED in notice for notice in settings.notices] == ([True] if warned else [])
    if warned:
        assert settings.notices[0].startswith(f"{path}: proxy.upstreams.openai {UNENCRYPTED}")
    monkeypatch.setenv("CTXTOP_PROXY_OPENAI_URL", "https://api.openai.com")
    assert load_proxy_settings().notices == ()  # overridden: the file's URL is not in effect
    monkeypatch.setenv("CTXTOP_PROXY_GEMINI_URL", url)
    notices = load_proxy_settings().notices
    assert [n.startswith("CTXTOP_PROXY_GEMINI_URL: proxy.upstreams.gemini") for n in notices] == (
        [True] if warned else []
    )


def test_ctxtop_config_shows_the_proxy_and_live_blocks_in_effect(isolated_dirs: Path) -> None:
    path = write_config(
        isolated_dirs,
        "proxy:\n  port: 9999\n  host: 0.0.0.0\n  read_timeout: 30\n"
        "  upstreams:\n    openai: http://10.0.0.9:8000\n"
        "live:\n  auto: compact\n  at: 0.7\n",
    )
    env = dict(os.environ, CTXTOP_PROXY_ANTHROPIC_URL="http://127.0.0.1:5678")
    done = run_ctxtop("config", env=env)
    assert done.returncode == 0, done.stderr
    shown = yaml.safe_load(done.stdout)
    assert shown["proxy"]["port"] == 9999 and shown["proxy"]["read_timeout"] == 30
    assert shown["proxy"]["upstreams"] == {
        **DEFAULT_UPSTREAMS,
        "anthropic": "http://127.0.0.1:5678",
        "openai": "http://10.0.0.9:8000",
    }
    assert shown["proxy"]["max_request_mb"] == 64
    assert shown["live"] == {"auto": "compact", "at": 0.7}
    assert done.stderr.splitlines() == [
        f"ctxtop: {path}: unknown key 'proxy.host' ignored",
        f"ctxtop: {path}: proxy.upstreams.openai {UNENCRYPTED} (10.0.0.9): the agent's requests "
        "and API keys would cross the network unencrypted",
    ]


def test_many_unknown_proxy_keys_are_a_few_lines(isolated_dirs: Path) -> None:
    keys = "".join(f"  key{n}: 1\n" for n in range(50))
    path = write_config(isolated_dirs, f"proxy:\n{keys}")
    notices = load_proxy_settings().notices
    assert notices[0] == f"{path}: unknown key 'proxy.key0' ignored"
    assert len(notices) == 11 and notices[-1] == f"{path}: and 40 more unknown keys ignored"

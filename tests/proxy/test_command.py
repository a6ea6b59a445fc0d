"""``ctxtop proxy``: its settings (the settings file's proxy: block, then the environment), the
lines it prints, and that the agent's key is never among them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from proxy_upstream import upstream
from test_forwarding import KEY, SESSION, anthropic_body, post

from ctxtop.engine.proxy.settings import DEFAULT_UPSTREAMS, load_proxy_settings


def write_config(root: Path, text: str) -> Path:
    path = root / "config" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_settings_file_then_environment(
    isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert load_proxy_settings().upstreams == DEFAULT_UPSTREAMS
    write_config(
        isolated_dirs,
        "proxy:\n  port: 9999\n  upstreams:\n    anthropic: http://127.0.0.1:1234/\n"
        "  read_timeout: 30\n",
    )
    settings = load_proxy_settings()
    assert settings.port == 9999 and settings.read_timeout == 30
    assert settings.upstreams["anthropic"] == "http://127.0.0.1:1234"
    assert settings.upstreams["openai"] == DEFAULT_UPSTREAMS["openai"]
    monkeypatch.setenv("CTXTOP_PROXY_ANTHROPIC_URL", "http://127.0.0.1:5678")
    monkeypatch.setenv("CTXTOP_PROXY_PORT", "0")
    settings = load_proxy_settings()
    assert settings.upstreams["anthropic"] == "http://127.0.0.1:5678" and settings.port == 0


def run_ctxtop(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxtop", *args],
        capture_output=True, text=True, timeout=60, check=False, env=env,
    )  # fmt: skip


def test_a_bad_upstream_is_one_line_naming_the_file(isolated_dirs: Path) -> None:
    path = write_config(isolated_dirs, "proxy:\n  upstreams:\n    openai: file:///etc/passwd\n")
    done = run_ctxtop("proxy", "--port", "0", env=dict(os.environ))
    assert done.returncode == 2
    assert done.stderr.startswith(f"ctxtop: {path}: proxy.upstreams.openai: must be an http")
    assert len(done.stderr.splitlines()) == 1


def test_the_command_prints_how_to_start_agents_and_a_line_per_request(
    isolated_dirs: Path,
) -> None:
    with upstream() as up:
        env = dict(os.environ, CTXTOP_PROXY_ANTHROPIC_URL=up.url, CTXTOP_PROXY_PORT="0")
        process = subprocess.Popen(
            [sys.executable, "-m", "ctxtop", "proxy"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        try:
            assert process.stdout is not None
            first = process.stdout.readline()
            port = int(first.split("127.0.0.1:")[1].split()[0])
            head = [process.stdout.readline()]  # a line per agent, then where it measures
            while not head[-1].startswith("measurements:"):
                head.append(process.stdout.readline())
            status, _, _ = post(port, "/v1/messages", anthropic_body(), {"x-api-key": KEY})
            request = process.stdout.readline()
        finally:
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=30)
    assert status == 200
    assert f"ANTHROPIC_BASE_URL=http://127.0.0.1:{port} claude" in head[0]
    assert request.startswith(f"{SESSION} anthropic 200: system ")
    assert "tools" in request and "reported 2000" in request
    everything = first + "".join(head) + request + out + err
    assert KEY not in everything
    assert "Traceback" not in err


@pytest.mark.parametrize("port", ["99999", "-5"])
def test_a_port_out_of_range_is_one_line(isolated_dirs: Path, port: str) -> None:
    done = run_ctxtop("proxy", "--port", port, env=dict(os.environ))
    assert done.returncode != 0
    assert done.stderr == f"ctxtop: --port must be a port number (0-65535), not {int(port)}\n"
    assert done.stdout == ""

"""The real OpenCode CLI (pinned) writes its database while ctxtop follows the session in it:
OpenCode is never kept waiting (it finishes its run), and ctxtop's figures are the usage the
model server reported, request by request."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

from agent_install import npm_cli
from measurement_lines import read_measurements
from model_server import ModelServer, _input_tokens
from tap import ctxtop_proxy

from ctxtop.engine.agents.opencode import place
from ctxtop.engine.agents.opencode.rows import address
from ctxtop.engine.agents.session_reader import SessionReader
from ctxtop.engine.live.session import LiveSession

OPENCODE_VERSION = "1.18.33"
SCRIPT = [
    {"call": "bash", "input": {"command": "echo hello > note.txt", "description": "Write a note"}},
    {"call": "read", "input": {"filePath": "note.txt"}},
    {"text": "Wrote and read note.txt."},
]
# OpenCode fetches ripgrep from the internet when there is none: a stand-in that finds nothing.
RG = "#!/bin/sh\n[ \"$1\" = --version ] && echo 'ripgrep 14.1.1'\nexit 0\n"


def environment(home: Path, port: int, tools: Path) -> dict[str, str]:
    config = home / ".config" / "opencode"
    config.mkdir(parents=True)
    provider = {
        "npm": "@ai-sdk/anthropic",
        "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": "{env:CTXTOP_TEST_KEY}"},
        "models": {"claude-test": {"limit": {"context": 100000, "output": 8000}}},
    }
    settings = {"provider": {"local": provider}, "model": "local/claude-test"}
    settings["small_model"] = "local/claude-test"
    (config / "opencode.json").write_text(json.dumps(settings))
    (tools / "rg").write_text(RG)
    (tools / "rg").chmod(0o755)
    return {
        "HOME": str(home),
        "PATH": f"{tools}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "LANG": "C.UTF-8",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "CTXTOP_TEST_KEY": "dummy",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    }


def opencode_project(root: Path) -> tuple[Path, Path, Path, Path]:
    """The pinned CLI, and a HOME, a git project and a folder of stand-in tools below ``root``."""
    opencode = npm_cli("opencode-ai", OPENCODE_VERSION, "opencode")
    home, repo, tools = root / "home", root / "repo", root / "tools"
    for directory in (home, repo, tools):
        directory.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    return opencode, home, repo, tools


def test_ctxtop_follows_a_running_opencode_without_holding_it_up(tmp_path: Path) -> None:
    opencode, home, repo, tools = opencode_project(tmp_path)
    database = home / ".local/share/opencode/opencode.db"
    seen: list[int] = []  # the request count after each read that found the session
    errors: list[str] = []
    done = threading.Event()

    def follow() -> None:
        reader: SessionReader | None = None
        while not done.is_set():
            if reader is None:
                ids = place.session_ids(database) if database.exists() else []
                reader = SessionReader(address(database, ids[0])) if ids else None
            elif reader.poll(as_it_stands=True) and reader.state is not None:
                seen.append(reader.state.api_requests)
            elif reader.error is not None:
                errors.append(reader.error)
            time.sleep(0.05)

    with ModelServer(messages=SCRIPT) as server:
        env = environment(home, server.port, tools)
        watcher = threading.Thread(target=follow, daemon=True)
        watcher.start()
        try:
            run = subprocess.run(
                [str(opencode), "run", "--pure", "--auto", "--format", "json", "Write a note."],
                cwd=repo,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
        finally:
            done.set()
            watcher.join(timeout=30)
        answered = [r for r in server.requests if r["path"].endswith("/v1/messages")]
    assert run.returncode == 0, run.stderr[-2000:]  # never kept waiting on the database
    assert not errors, errors
    main_loop = [r["body"] for r in answered if r["body"].get("tools")]
    assert len(main_loop) == len(SCRIPT)
    [session_id] = place.session_ids(database)
    reader = SessionReader(address(database, session_id))
    state = reader.require_state()
    assert state.api_requests == len(SCRIPT) and seen and max(seen) <= len(SCRIPT)
    # OpenCode's Anthropic input is the uncached prompt: here all of it (no cache reported).
    prompts = [_input_tokens(body) for body in main_loop]
    assert [r.usage.input_tokens_total for r in state.responses.values()] == prompts
    assert state.totals.output_tokens == 3 * len(SCRIPT)
    assert state.last_response is not None
    assert state.last_response.usage.input_tokens_total == prompts[-1]
    assert [call.name for call in state.tools.values()] == ["bash", "read"]


def test_opencode_through_the_proxy_is_measured_under_its_session(tmp_path: Path) -> None:
    """Live mode: OpenCode's provider ``baseURL`` at ``ctxtop proxy``; it sends its session id
    in an ``x-session-id`` header, so each request is measured under the session, and the
    dashboard on the session in the database shows the measured prompt."""
    opencode, home, repo, tools = opencode_project(tmp_path)
    with ModelServer(messages=SCRIPT) as server, ctxtop_proxy(server.port) as proxy:
        run = subprocess.run(
            [str(opencode), "run", "--pure", "--auto", "--format", "json", "Write a note."],
            cwd=repo,
            env=environment(home, proxy.port, tools),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        answered = [r for r in server.requests if r["body"].get("tools")]
    assert run.returncode == 0, run.stderr[-2000:]
    database = home / ".local/share/opencode/opencode.db"
    [session_id] = place.session_ids(database)
    measured = [line for line in read_measurements(session_id) if line["tools"].get("count")]
    assert len(measured) == len(answered) == len(SCRIPT)
    live = LiveSession(address(database, session_id))
    live.poll()
    view = live.view()
    assert view is not None and view.measured is not None
    assert view.measured.session_id == session_id

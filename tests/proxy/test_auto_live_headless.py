"""Headless ``ctxtop proxy`` applies the settings' automatic live policy (``live: auto``) as the
dashboard does: the real ``ctxtop proxy`` on 127.0.0.1 in front of the project's model server,
with a session Claude Code wrote (tests/proxy/data/live) where Claude Code keeps its sessions.
Past ``at``, the request after the one that passed it reaches the model with the default edit's
placeholders; under it, the agent's bytes pass unchanged. The agent's log is never touched."""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))

from model_server import ModelServer
from test_live_dashboard import BODY, PLACEHOLDER, SESSION, SESSION_LOG, send

from ctxtop.engine.cli.main import main
from ctxtop.engine.config import config_path
from ctxtop.engine.live.auto_live import FORGET_SECONDS, AutoLive, AutoLiveWatch, session_log
from ctxtop.engine.proxy.live_plan import plan_path
from ctxtop.engine.proxy.rewrite_live import LiveRewriter
from ctxtop.engine.proxy.server import ProxyServer
from ctxtop.engine.proxy.settings import ProxySettings
from ctxtop.engine.tokens import get_encoding

ENC = get_encoding("o200k_base")


def report_of(log: Path) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", str(log), "--json"]) == 0
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


def gauge_tokens(log: Path) -> int:
    """The gauge's figure: the last request's prompt and output (21,649) with its answer's text
    instead of the model server's 3 output tokens, calibrated."""
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    last = [r for r in rows if r.get("type") == "assistant"][-1]["message"]
    text = sum(ENC.count(b["text"]) for b in last["content"] if b["type"] == "text")
    factor = report_of(log)["context_tokens"]["tokenizer_factor"]
    assert last["usage"]["output_tokens"] == 3 and text > 2 * 3
    return 21_649 - 3 + round(text * factor)


SUMMARY = "This session continues an earlier conversation"


def agent_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home where Claude Code's session is the only session of any agent; its log."""
    home = tmp_path / "home"
    log = home / ".claude" / "projects" / "-home-dev-project" / SESSION_LOG.name
    log.parent.mkdir(parents=True)
    shutil.copyfile(SESSION_LOG, log)
    for name, value in (("HOME", home), ("CLAUDE_CONFIG_DIR", home / ".claude")):
        monkeypatch.setenv(name, str(value))
    for name in ("CODEX_HOME", "GEMINI_CLI_HOME", "COPILOT_HOME"):
        monkeypatch.delenv(name, raising=False)
    return log


def settings(auto: str, at: float) -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"live:\n  auto: {auto}\n  at: {at}\n", encoding="utf-8")


def received(action: str, body: dict[str, Any]) -> bool:
    """Whether the model received the plan of ``action``: the default edit's placeholders (the
    last 3 tool uses kept: 2 results cleared) or the compaction's summary."""
    if action == "edit":
        return str(body).count(PLACEHOLDER) == 2
    first = body["messages"][0]["content"]
    return any(
        str(block.get("text", "")).startswith(SUMMARY) for block in first if isinstance(block, dict)
    )


@pytest.mark.parametrize("action", ["edit", "compact"])
def test_ctxtop_proxy_applies_the_policy_once_the_fill_passes_it(
    action: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = agent_home(tmp_path, monkeypatch)
    before = log.read_bytes()
    settings(action, 0.01)
    with ModelServer() as model:
        env = dict(os.environ, CTXTOP_PROXY_ANTHROPIC_URL=f"http://127.0.0.1:{model.port}")
        process = subprocess.Popen(
            [sys.executable, "-m", "ctxtop", "proxy", "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        lines: queue.Queue[str] = queue.Queue()
        assert process.stdout is not None
        threading.Thread(target=lambda: [lines.put(x) for x in process.stdout], daemon=True).start()
        try:
            port = int(lines.get(timeout=30).split("127.0.0.1:")[1].split()[0])
            head = [lines.get(timeout=30)]  # a line per agent, where it measures, the policy
            while not head[-1].startswith("measurements:"):
                head.append(lines.get(timeout=30))
            policy = lines.get(timeout=30)
            assert f"automatic live policy: {action} a session once its fill passes 1%" in policy
            send(port)
            assert model.requests[-1]["raw"] == BODY  # at 2.2 %: no plan yet, the agent's bytes
            said = ""
            while "automatic live policy: " + SESSION not in said:
                said = lines.get(timeout=60)
            # ~: the gauge's figure counts the last answer's text (the model server's output
            # figure, 3 tokens, is below it), calibrated; of claude-opus-4-8's 1M window.
            fill = f"{gauge_tokens(log) / 10_000:.1f}%~"
            assert f"at {fill} of its window, the fill passed 1%: {action} applied live" in said
            assert plan_path(SESSION).exists()
            send(port)
            assert not received(action, model.requests[0]["body"])
            assert received(action, model.requests[-1]["body"])
        finally:
            process.terminate()
            _, err = process.communicate(timeout=30)
    assert "Traceback" not in err
    assert log.read_bytes() == before  # the agent's log keeps the originals


def test_under_the_threshold_nothing_is_applied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same wiring in-process, so the look after the request can be waited for."""
    log = agent_home(tmp_path, monkeypatch)
    assert session_log(SESSION) == log
    reports: list[str] = []
    watch = AutoLiveWatch(AutoLive("edit", 0.5), report=reports.append)
    with ModelServer() as model:
        config = ProxySettings(port=0).with_upstreams(anthropic=f"http://127.0.0.1:{model.port}")
        proxy = ProxyServer(
            config, rewriter=LiveRewriter(), on_measured=lambda line: watch.seen(line["session_id"])
        ).start_in_thread()
        try:
            send(proxy.port)
            while proxy.server.served < 1:
                threading.Event().wait(0.05)
        finally:
            proxy.stop()
        watch.close()  # the look the request queued is done
        assert model.requests[-1]["raw"] == BODY
    assert reports == [] and not plan_path(SESSION).exists()
    gauge = watch.gauge(SESSION)
    # The dashboard's gauge, of claude-opus-4-8's 1M window.
    expected = gauge_tokens(log)
    assert gauge is not None and gauge.tokens == expected and gauge.source == "calibrated"
    assert gauge.fill == expected / 1_000_000
    assert not watch.look(SESSION)
    # A session with no request for half an hour is let go (read again if it comes back).
    watch.forget_quiet(time.monotonic() + FORGET_SECONDS / 2)
    assert SESSION in watch.sessions
    watch.forget_quiet(time.monotonic() + FORGET_SECONDS + 1)
    assert SESSION not in watch.sessions

"""End to end in a real terminal: ``ctxtop --proxy SESSION`` runs the proxy beside the dashboard;
a request through it for that session makes the dashboard show the system prompt and tools as
measured, and ``m`` the measured request's tools."""

from __future__ import annotations

import http.client
import json
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from dashboard_support import write_lines
from test_dashboard_tmux import ctxtop_in_tmux, wait_for_screen

from ctxtop.engine.live.session import LiveSession

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class _Model(BaseHTTPRequestHandler):
    """Answers every request with a JSON message reporting a 30,000-token prompt."""

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        answer = json.dumps({"type": "message", "usage": {"input_tokens": 30000}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


@contextmanager
def model_server() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_dashboard_with_proxy_measures_the_session(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    write_lines(session, 40)
    live = LiveSession(session)
    live.poll()
    view = live.figures()
    assert view is not None and view.session_id
    body = json.dumps({
        "model": "claude-sonnet-4-5",
        "metadata": {"user_id": json.dumps({"session_id": view.session_id})},
        "system": [{"type": "text", "text": "You are an agent. " * 500}],
        "tools": [{"name": "WebFetchLongName", "description": "fetch " * 900, "input_schema": {}}],
        "messages": [{"role": "user", "content": "hello"}],
    }).encode()  # fmt: skip
    port = unused_port()
    with model_server() as model:
        env = {
            "CTXTOP_PROXY_PORT": str(port),
            "CTXTOP_PROXY_ANTHROPIC_URL": f"http://127.0.0.1:{model}",
        }
        with ctxtop_in_tmux("--proxy", str(session), env=env) as name:
            shown, screen = wait_for_screen(name, "ctxtop proxy on", limit=30)
            assert shown, screen
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.request("POST", "/v1/messages", body=body)
            assert connection.getresponse().status == 200
            connection.close()
            write_lines(session, 5, start=40)  # the agent writes on: a new analysis
            shown, screen = wait_for_screen(name, "k=", limit=30)
            assert shown, screen
            subprocess.run(["tmux", "send-keys", "-t", name, "m"], check=True)
            # (Only the measured screen says this: the dashboard may show the tool's name too.)
            shown, screen = wait_for_screen(name, "30.0k prompt the API reported", limit=30)
    assert shown, screen
    assert "Tool definitions" in screen and "WebFetchLongName" in screen

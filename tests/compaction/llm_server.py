"""A summarising model on 127.0.0.1 for the ``llm`` summariser's tests: OpenAI Chat Completions
(``/v1/chat/completions``) and Anthropic Messages (``/v1/messages``), with a scripted behaviour.

Behaviours: ``good`` (an analysis and a summary), ``reject_tools`` (HTTP 400 when the request
carries tools, else ``good``), ``slow`` (answers after ``delay`` seconds), ``error`` (HTTP 500),
``no_summary`` (an analysis only), ``oversized`` (a summary far over any budget). Every request
(path, headers, body) is recorded. Standard library only.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SUMMARY = """1. Conversation overview
- The user asked to make div() reject zero (MARKER-FROM-THE-MODEL).
2. Technical foundation
- Python, unittest
3. Codebase status
- src/calc/ops.py: div() raises ValueError
4. Problem resolution
- pytest missing: used unittest
5. Progress
- Done: the fix and its test
6. Active work state
- Idle
7. Recent operations
- git commit
8. Continuation plan
- Wait for the next request"""


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _send(self, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        body = json.loads(raw or b"{}")
        with self.server.lock:
            self.server.requests.append(
                {"path": self.path, "headers": dict(self.headers.items()), "body": body}
            )
        behaviour = self.server.behaviour
        if behaviour == "slow":
            time.sleep(self.server.delay)
        if behaviour == "error":
            self._send(500, {"error": {"message": "the model is on fire"}})
            return
        if behaviour == "reject_tools" and body.get("tools"):
            self._send(400, {"error": {"message": "tools are not supported here"}})
            return
        text = "<analysis>Went through the conversation in order.</analysis>\n"
        if behaviour == "oversized":
            text += "<summary>" + "very long summary line\n" * 20000 + "</summary>"
        elif behaviour != "no_summary":
            text += f"<summary>\n{SUMMARY}\n</summary>"
        if self.path.endswith("/v1/messages"):
            self._send(200, {"type": "message", "role": "assistant", "model": body["model"],
                             "content": [{"type": "text", "text": text}],
                             "stop_reason": "end_turn"})  # fmt: skip
        elif self.path.endswith("/chat/completions"):
            message = {"role": "assistant", "content": text}
            choice = {"index": 0, "finish_reason": "stop", "message": message}
            self._send(200, {"object": "chat.completion", "model": body["model"],
                             "choices": [choice]})  # fmt: skip
        else:
            self._send(404, {"error": {"message": self.path}})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    requests: list[dict[str, Any]]
    behaviour: str
    delay: float
    lock: threading.Lock

    def handle_error(self, request: Any, client_address: Any) -> None:
        return None  # a client that gave up waiting (the timeout test) is not an error here


class SummaryServer:
    """``with SummaryServer("good") as server:`` listens on 127.0.0.1:<server.port>."""

    def __init__(self, behaviour: str, delay: float = 0.0) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.requests = []
        self._server.behaviour = behaviour
        self._server.delay = delay
        self._server.lock = threading.Lock()
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._server.lock:
            return list(self._server.requests)

    def __enter__(self) -> SummaryServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

"""A tiny model server on 127.0.0.1 for real agent CLIs: Anthropic ``/v1/messages`` and the
OpenAI Responses API ``/v1/responses`` (for Codex).

Every request body is recorded (``ModelServer.requests``). Responses replies come from the
``replies`` queue given to the server (``{"text": ...}`` or ``{"call": name, "arguments": json}``)
and are a short text answer once it is empty; Anthropic replies are always text. Streamed (SSE)
or not, as the client asked. Standard library only.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = "Done."


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _json(self, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._json(200, {"ok": True})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"unparsed": raw.decode("utf-8", "replace")}
        with self.server.lock:
            self.server.requests.append({"path": self.path, "body": body})
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            self._json(200, {"input_tokens": max(len(raw) // 4, 1)})
        elif path.endswith("/v1/messages"):
            self._messages(body)
        elif path.endswith("/responses"):
            self._responses(body)
        else:
            self._json(404, {"type": "error", "error": {"type": "not_found", "message": path}})

    def _messages(self, body: dict[str, Any]) -> None:
        model = str(body.get("model") or "claude-sonnet-4-5")
        usage = {
            "input_tokens": 100,
            "output_tokens": 3,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        message = {
            "id": f"msg_{len(self.server.requests):024d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": REPLY}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            self._json(200, message)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        start = dict(message, content=[], stop_reason=None)
        events = [
            ("message_start", {"type": "message_start", "message": start}),
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            ),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": REPLY},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": usage,
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        for name, data in events:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

    def _sse(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        for name, data in events:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

    def _responses(self, body: dict[str, Any]) -> None:
        with self.server.lock:
            reply = self.server.replies.pop(0) if self.server.replies else {"text": REPLY}
            number = len(self.server.requests)
        item: dict[str, Any]
        if "call" in reply:
            item = {
                "type": "function_call",
                "id": f"fc_{number:020d}",
                "call_id": f"call_{number:020d}",
                "name": reply["call"],
                "arguments": reply["arguments"],
                "status": "completed",
            }
        else:
            text = str(reply["text"])
            item = {
                "type": "message",
                "id": f"msg_{number:020d}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        usage = {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 105,
        }
        base = {
            "id": f"resp_{number:020d}",
            "object": "response",
            "created_at": 0,
            "model": body.get("model", "gpt-5"),
            "status": "in_progress",
            "output": [],
            "usage": None,
            "error": None,
            "incomplete_details": None,
        }
        done = dict(base, status="completed", output=[item], usage=usage)
        if not body.get("stream"):
            self._json(200, done)
            return
        events: list[tuple[str, dict[str, Any]]] = [
            ("response.created", {"response": base}),
            ("response.output_item.added", {"output_index": 0, "item": item}),
            ("response.output_item.done", {"output_index": 0, "item": item}),
            ("response.completed", {"response": done}),
        ]
        for sequence, (name, data) in enumerate(events):
            data.update(type=name, sequence_number=sequence)
        self._sse(events)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    requests: list[dict[str, Any]]
    replies: list[dict[str, Any]]
    lock: threading.Lock


class ModelServer:
    """``with ModelServer() as server:`` listens on 127.0.0.1:<server.port> until the block ends."""

    def __init__(self, replies: list[dict[str, Any]] | None = None) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.requests = []
        self._server.replies = list(replies or [])
        self._server.lock = threading.Lock()
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._server.lock:
            return list(self._server.requests)

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

"""A real upstream for the proxy tests: an HTTP server on 127.0.0.1 (standard library) that
records every request's exact bytes and headers and answers as its ``mode`` says: a streamed
(SSE) answer, a JSON answer, an error status, a hang, a stream cut short, an endless slow stream
or a redirect. Plus the proxy itself, run as the dashboard runs it (its own loop in a thread)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ctxtop.engine.proxy.server import ProxyServer, RunningProxy
from ctxtop.engine.proxy.settings import ProxySettings

USAGE_START = {
    "input_tokens": 1200,
    "cache_creation_input_tokens": 300,
    "cache_read_input_tokens": 500,
    "output_tokens": 1,
}


def sse_events(count: int = 5, pad: int = 0) -> bytes:
    """An Anthropic-style stream: message_start with usage, ``count`` text deltas, the end."""
    events = [
        (
            "message_start",
            {"type": "message_start", "message": {"id": "msg_1", "usage": USAGE_START}},
        )
    ]
    events += [
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": f"part {i} " + "x" * pad},
            },
        )
        for i in range(count)
    ]
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 42},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return b"".join(f"event: {n}\ndata: {json.dumps(d)}\n\n".encode() for n, d in events)


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: bytes


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_GET(self) -> None:
        self.do_POST()

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length)
        with self.server.lock:
            self.server.seen.append(Seen(self.path, dict(self.headers.items()), body))
        getattr(self, f"_{self.server.mode}")()

    def _send(self, status: int, body: bytes, kind: str = "application/json", **extra: str) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        for key, value in extra.items():
            self.send_header(key.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def _sse(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for event in self.server.stream.split(b"\n\n")[:-1]:
            data = event + b"\n\n"
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")

    def _json(self) -> None:
        self._send(200, json.dumps({"usage": {"input_tokens": 7, "output_tokens": 1}}).encode())

    def _status500(self) -> None:
        self._send(500, b'{"type":"error","error":{"type":"api_error","message":"upstream broke"}}')

    def _status429(self) -> None:
        body = b'{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'
        self._send(429, body, retry_after="17")

    def _redirect(self) -> None:
        self._send(307, b"", location=self.server.location)

    def _hang(self) -> None:
        self.server.release.wait(30)

    def _cut(self) -> None:
        """Half the promised stream, then the connection closes (no final chunk)."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(self.server.stream)))
        self.end_headers()
        self.wfile.write(self.server.stream[: len(self.server.stream) // 2])
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_RDWR)

    def _endless(self) -> None:
        """A slow stream that goes on until the reader goes away (then ``gone`` is set)."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        data = b"event: ping\ndata: {}\n\n"
        try:
            for _ in range(600):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
                time.sleep(0.05)
        except OSError:
            self.server.gone.set()


class _Server(ThreadingHTTPServer):
    daemon_threads = True


@dataclass
class Upstream:
    server: _Server
    seen: list[Seen] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def set(self, mode: str, **values: Any) -> None:
        self.server.mode = mode
        for key, value in values.items():
            setattr(self.server, key, value)


@contextmanager
def upstream(mode: str = "sse", stream: bytes | None = None) -> Iterator[Upstream]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.mode, server.stream, server.location = mode, stream or sse_events(), ""
    server.seen, server.lock = [], threading.Lock()
    server.release, server.gone = threading.Event(), threading.Event()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Upstream(server, server.seen)
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()


@contextmanager
def proxy_to(url: str, **settings: Any) -> Iterator[RunningProxy]:
    """The proxy on a free port with every upstream at ``url``."""
    config = ProxySettings(port=0, **settings).with_upstreams(anthropic=url, openai=url, gemini=url)
    running = ProxyServer(config).start_in_thread()
    try:
        yield running
    finally:
        running.stop()


@contextmanager
def proxy_to_each() -> Iterator[tuple[int, Upstream, Upstream, Upstream]]:
    """The proxy on a free port with an upstream of its own for each API: (port, anthropic,
    openai, gemini)."""
    with upstream("json") as anthropic, upstream("json") as openai, upstream("json") as gemini:
        config = ProxySettings(port=0).with_upstreams(
            anthropic=anthropic.url, openai=openai.url, gemini=gemini.url
        )
        running = ProxyServer(config).start_in_thread()
        try:
            yield running.port, anthropic, openai, gemini
        finally:
            running.stop()

"""A TCP server on 127.0.0.1 that answers each connection with a scripted byte sequence, for
the endpoint failures a real HTTP server library would not produce: a reply dripped a byte at a
time, a reply cut short, a non-HTTP greeting, a 429 with Retry-After. Standard library only."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable

Script = Callable[[socket.socket, threading.Event], None]


def read_request(conn: socket.socket) -> bytes:
    """The request's bytes (headers and a body of the announced length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def send_reply(conn: socket.socket, status: bytes, body: bytes) -> None:
    """An HTTP/1.1 reply of ``status`` with ``body`` (its length announced)."""
    head = b"HTTP/1.1 " + status + b"\r\ncontent-length: " + str(len(body)).encode()
    conn.sendall(head + b"\r\n\r\n" + body)


def drip(conn: socket.socket, stop: threading.Event) -> None:
    """Headers promising a long body, then one byte every 50 ms for as long as it is read."""
    read_request(conn)
    conn.sendall(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n"
    )
    while not stop.wait(0.05):
        try:
            conn.sendall(b" ")
        except OSError:
            return


def cut_short(conn: socket.socket, stop: threading.Event) -> None:
    read_request(conn)
    conn.sendall(b'HTTP/1.1 200 OK\r\ncontent-length: 5000\r\n\r\n{"choices": [')


def not_http(conn: socket.socket, stop: threading.Event) -> None:
    read_request(conn)
    conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")


def too_many_requests(conn: socket.socket, stop: threading.Event) -> None:
    read_request(conn)
    body = b'{"error": {"message": "rate limit reached for requests"}}'
    conn.sendall(
        b"HTTP/1.1 429 Too Many Requests\r\nretry-after: 30\r\ncontent-type: application/json\r\n"
        b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )


def huge(conn: socket.socket, stop: threading.Event) -> None:
    """A reply of 200 MB (sent as long as the client reads)."""
    read_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 209715200\r\n\r\n")
    block = b"a" * 65536
    try:
        for _ in range(3200):
            if stop.is_set():
                return
            conn.sendall(block)
    except OSError:
        return


def echo_key(header: bytes) -> Script:
    """HTTP 401 whose body repeats the request's ``header`` value after 170 bytes of text."""

    def script(conn: socket.socket, stop: threading.Event) -> None:
        request = read_request(conn)
        value = b""
        for line in request.split(b"\r\n"):
            name, _, rest = line.partition(b":")
            if name.strip().lower() == header:
                value = rest.strip()
        send_reply(conn, b"401 Unauthorized", b"e" * 170 + b" you sent " + value)

    return script


class RawServer:
    """``with RawServer(script) as server:`` listens on 127.0.0.1:<server.port>."""

    def __init__(self, script: Script) -> None:
        self._script = script
        self._stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self.port = self._listener.getsockname()[1]
        self.connections = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            try:
                self._script(conn, self._stop)
                time.sleep(0.05)
            except OSError:
                return

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._listener.close()


def refused_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return int(probe.getsockname()[1])


def redirect_to(url: str, status: int) -> Script:
    """A redirect (``status`` 301, 302, 303, 307 or 308) to ``url``."""

    def script(conn: socket.socket, stop: threading.Event) -> None:
        read_request(conn)
        conn.sendall(
            f"HTTP/1.1 {status} Moved\r\nlocation: {url}\r\ncontent-length: 0\r\n\r\n".encode()
        )

    return script


def recording(requests: list[bytes]) -> Script:
    """Records each request's bytes and answers 500."""

    def script(conn: socket.socket, stop: threading.Event) -> None:
        requests.append(read_request(conn))
        conn.sendall(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n")

    return script


def chat_reply(text: str, requests: list[bytes]) -> Script:
    """Records each request's bytes and answers a Chat Completions reply whose message is
    ``text`` (what a misbehaving or injected model might return)."""

    def script(conn: socket.socket, stop: threading.Event) -> None:
        requests.append(read_request(conn))
        message = {"role": "assistant", "content": text}
        body = json.dumps(
            {"object": "chat.completion", "choices": [{"index": 0, "message": message}]}
        ).encode()
        send_reply(conn, b"200 OK", body)

    return script

"""Requests a hostile or unusual local client sends through the proxy, to a raw upstream on
127.0.0.1 that records the exact bytes it receives: ``Expect: 100-continue``, compressed bodies,
bodies ctxtop cannot measure. The agent's bytes reach the upstream unchanged unless a plan
applies, and ctxtop's own errors are in the provider's error shape."""

from __future__ import annotations

import socket
import sys
import threading
from pathlib import Path

from cli_run import ROOT
from raw_server import RawServer, read_request, send_reply

sys.path.insert(0, str(ROOT / "tests/proxy"))
from proxy_upstream import proxy_to

BODY = b'{"model":"m","messages":[{"role":"user","content":"hi"}]}'


def answering(requests: list[bytes]) -> RawServer:
    """A raw upstream that records each request and answers 200 with a small JSON body, and
    never sends a ``100 Continue`` of its own."""

    def script(conn: socket.socket, stop: threading.Event) -> None:
        requests.append(read_request(conn))
        send_reply(conn, b"200 OK", b'{"usage":{"input_tokens":3,"output_tokens":1}}')

    return RawServer(script)


def head_and_body(request: bytes) -> tuple[dict[str, str], bytes]:
    head, _, body = request.partition(b"\r\n\r\n")
    headers = {}
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        headers[name.decode().strip().lower()] = value.decode().strip()
    return headers, body


def read_until(sock: socket.socket, marker: bytes, have: bytes = b"") -> bytes:
    while marker not in have:
        chunk = sock.recv(65536)
        if not chunk:
            break
        have += chunk
    return have


def test_expect_100_continue_is_answered_once_and_the_body_reaches_the_upstream(
    isolated_dirs: Path,
) -> None:
    """The proxy answered the agent's 100 and also forwarded ``Expect``, so an upstream that
    sends no 100 of its own never got the body (the request hung until the client gave up)."""
    seen: list[bytes] = []
    with (
        answering(seen) as raw,
        proxy_to(raw.url, read_timeout=20) as proxy,
        socket.create_connection(("127.0.0.1", proxy.port), timeout=20) as sock,
    ):
        sock.sendall(
            b"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nExpect: 100-continue\r\n"
            b"Content-Length: " + str(len(BODY)).encode() + b"\r\n\r\n"
        )
        interim = read_until(sock, b"\r\n\r\n")
        sock.sendall(BODY)
        answer = read_until(sock, b'"output_tokens":1}}', interim)
    assert interim.startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
    assert answer.count(b"100 Continue") == 1
    final = answer.split(b"\r\n\r\n", 1)[1]
    assert final.startswith(b"HTTP/1.1 200 ")
    [request] = seen
    headers, body = head_and_body(request)
    assert body == BODY and "expect" not in headers

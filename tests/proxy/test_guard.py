"""Never an open proxy: only loopback clients, only requests for the loopback address in origin
form, never from a web page; whatever the request names, it goes to the configured upstream."""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from proxy_upstream import proxy_to, upstream
from test_forwarding import anthropic_body

from ctxtop.engine.proxy.server import ProxyServer
from ctxtop.engine.proxy.settings import ProxySettings


def raw_request(port: int, request: bytes) -> bytes:
    """Send ``request`` as typed (no client library fixes it up); the answer's bytes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def non_loopback_address() -> str | None:
    """An address of this machine outside 127.0.0.0/8 (the one a route to a public address
    would leave from), or None when the machine has only loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent: UDP connect only picks a route
            address = str(probe.getsockname()[0])
        except OSError:
            return None
    return None if address.startswith("127.") else address


@contextmanager
def proxy_on(host: str, url: str) -> Iterator[int]:
    """The proxy's own app served on ``host`` (the real proxy binds 127.0.0.1 only; binding
    another address is how a non-loopback client can reach it in a test)."""
    server = ProxyServer(ProxySettings(port=0).with_upstreams(anthropic=url, openai=url))
    loop = asyncio.new_event_loop()
    started = threading.Event()

    def run() -> None:
        loop.run_until_complete(server.start(host))
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    started.wait(10)
    try:
        yield server.port
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def test_a_client_from_a_non_loopback_address_is_refused(isolated_dirs: Path) -> None:
    address = non_loopback_address()
    if address is None:
        pytest.skip("this machine has no address outside loopback to connect from")
    with upstream() as up, proxy_on(address, up.url) as port:
        connection = http.client.HTTPConnection(
            address, port, timeout=10, source_address=(address, 0)
        )
        # The Host is the loopback one the proxy accepts: only the peer's address is wrong.
        connection.request(
            "POST", "/v1/messages", body=anthropic_body(), headers={"Host": f"127.0.0.1:{port}"}
        )
        response = connection.getresponse()
        answer = response.read()
        connection.close()
        # The same request from loopback is served (the refusal is the peer's address).
        local = http.client.HTTPConnection(
            address, port, timeout=10, source_address=("127.0.0.1", 0)
        )
        local.request(
            "POST", "/v1/messages", body=anthropic_body(), headers={"Host": f"127.0.0.1:{port}"}
        )
        served = local.getresponse().status
        local.close()
    assert response.status == 403
    assert "loopback" in json.loads(answer)["error"]["message"]
    assert served == 200
    assert len(up.seen) == 1


def test_the_proxy_listens_on_loopback_only(isolated_dirs: Path) -> None:
    address = non_loopback_address()
    if address is None:
        pytest.skip("this machine has no address outside loopback")
    with proxy_to("http://127.0.0.1:9") as proxy, pytest.raises(ConnectionRefusedError):
        socket.create_connection((address, proxy.port), timeout=5).close()


@pytest.mark.parametrize(
    "request_line",
    [
        b"GET http://example.com/v1/models HTTP/1.1\r\nHost: example.com\r\n",
        b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n",
        b"POST /v1/messages HTTP/1.1\r\nHost: example.com\r\nContent-Length: 2\r\n",
        b"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://evil.example\r\n"
        b"Content-Length: 2\r\n",
    ],
    ids=["absolute-form", "connect", "other-host", "web-page"],
)
def test_proxy_form_other_hosts_and_web_pages_are_refused(
    isolated_dirs: Path, request_line: bytes
) -> None:
    with upstream() as up, proxy_to(up.url) as proxy:
        body = b"{}" if b"Content-Length" in request_line else b""
        answer = raw_request(proxy.port, request_line + b"Connection: close\r\n\r\n" + body)
    assert answer.startswith(b"HTTP/1.1 403"), answer[:100]
    assert b"ctxtop proxy: " in answer
    assert up.seen == []

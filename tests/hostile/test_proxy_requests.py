"""Requests a hostile or unusual local client sends through the proxy, to a raw upstream on
127.0.0.1 that records the exact bytes it receives: ``Expect: 100-continue``, compressed bodies,
bodies ctxtop cannot measure. The agent's bytes reach the upstream unchanged unless a plan
applies, and ctxtop's own errors are in the provider's error shape."""

from __future__ import annotations

import gzip
import http.client
import json
import socket
import sys
import threading
import zlib
from pathlib import Path

import pytest
from cli_run import ROOT
from raw_server import RawServer, read_request

sys.path.insert(0, str(ROOT / "tests/proxy"))
from proxy_upstream import proxy_to

from ctxtop.engine.proxy import content_coding, server
from ctxtop.engine.proxy.rewrite_live import LiveRewriter

ANSWER = b'{"usage":{"input_tokens":3,"output_tokens":1}}'
BODY = b'{"model":"m","messages":[{"role":"user","content":"hi"}]}'


def answering(requests: list[bytes]) -> RawServer:
    """A raw upstream that records each request and answers 200 with ``ANSWER`` (then closes
    the connection), and never sends a ``100 Continue`` of its own."""

    def script(conn: socket.socket, stop: threading.Event) -> None:
        requests.append(read_request(conn))
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-type: application/json\r\n"
            b"content-length: " + str(len(ANSWER)).encode() + b"\r\n\r\n" + ANSWER
        )

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


def post(port: int, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


UNMEASURABLE = {
    "invalid UTF-8": b'{"model":"m","messages":[{"role":"user","content":"\xff\xfe"}]}',
    "deep JSON": b'{"messages":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
}


@pytest.mark.parametrize("path", ["/v1/messages", "/v1/chat/completions", "/v1/responses"])
def test_a_body_ctxtop_cannot_read_is_forwarded_unchanged_in_live_mode(
    isolated_dirs: Path, path: str
) -> None:
    """With a live rewriter registered and no session id in the headers, such bodies were a
    bare aiohttp 500 (text/plain) and never reached the upstream."""
    seen: list[bytes] = []
    with answering(seen) as raw, proxy_to(raw.url) as proxy:
        proxy.server.set_rewriter(LiveRewriter())
        answers = [
            post(proxy.port, path, body, {"content-type": "application/json"})
            for body in UNMEASURABLE.values()
        ]
    assert answers == [(200, ANSWER)] * 2
    assert [head_and_body(request)[1] for request in seen] == list(UNMEASURABLE.values())


@pytest.mark.parametrize(
    ("path", "shape"),
    [("/v1/messages", "anthropic"), ("/v1/chat/completions", "openai"), ("/v1beta/x", "gemini")],
)
def test_a_fault_of_ctxtops_own_is_an_error_in_the_providers_shape(
    isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch, path: str, shape: str
) -> None:
    """A bug in ctxtop's request handling (here: reading the session id breaks) answers a 500
    the agent can read as its provider's error, not aiohttp's plain text."""

    def broken(headers: object) -> str:
        raise KeyError("a bug")

    monkeypatch.setattr(server, "header_session_id", broken)
    path = path if shape != "gemini" else "/v1beta/models/g:generateContent"
    with answering([]) as raw, proxy_to(raw.url) as proxy:
        proxy.server.set_rewriter(LiveRewriter())
        status, answer = post(proxy.port, path, BODY, {"content-type": "application/json"})
    assert status == 500
    value = json.loads(answer)
    error = value["error"]
    assert error["message"] == "ctxtop proxy: internal error (KeyError)"
    if shape == "anthropic":
        assert value["type"] == "error" and error["type"] == "api_error"
    elif shape == "gemini":
        assert error["code"] == 500 and error["status"] == "UNAVAILABLE"
    else:
        assert error["type"] == "server_error" and "param" in error


# Bodies as an agent would compress them. zstd and br are only labelled so (ctxtop has no module
# for them, and whether one is installed must not matter: nothing is applied to them here).
COMPRESSED = {
    "gzip": gzip.compress(BODY),
    "deflate": zlib.compress(BODY),
    "zstd": b"\x28\xb5\x2f\xfd" + b"not really zstd",
    "br": b"\x0b\x02\x80" + b"not really brotli",
    "x-made-up": b"whatever the client says",
    "gzip, identity": gzip.compress(BODY),
}


def test_a_compressed_body_passes_byte_for_byte_when_nothing_is_applied(
    isolated_dirs: Path,
) -> None:
    """gzip bodies used to reach the upstream decoded but still labelled gzip; zstd and br were
    answered with aiohttp's plain-text 400 ("install backports.zstd")."""
    seen: list[bytes] = []
    with answering(seen) as raw, proxy_to(raw.url) as proxy:
        answers = [
            post(proxy.port, "/v1/messages", body, {"content-encoding": coding})
            for coding, body in COMPRESSED.items()
        ]
    assert answers == [(200, ANSWER)] * len(COMPRESSED)
    got = [head_and_body(request) for request in seen]
    assert [body for _, body in got] == list(COMPRESSED.values())
    assert [headers["content-encoding"] for headers, _ in got] == list(COMPRESSED)


def shorten(protocol: str, session: str | None, body: bytes) -> bytes | None:
    """A rewriter that applies to every request it can read (it gets the decoded body)."""
    return b'{"rewritten":true}' if json.loads(body)["messages"] else None


@pytest.mark.parametrize("coding", ["gzip", "deflate", "gzip, identity"])
def test_a_rewritten_body_is_encoded_again_as_the_agent_encoded_it(
    isolated_dirs: Path, coding: str
) -> None:
    seen: list[bytes] = []
    with answering(seen) as raw, proxy_to(raw.url) as proxy:
        proxy.server.set_rewriter(shorten)
        status, _ = post(
            proxy.port, "/v1/messages", COMPRESSED[coding], {"content-encoding": coding}
        )
    assert status == 200
    [(headers, body)] = [head_and_body(request) for request in seen]
    assert headers["content-encoding"] == coding
    assert int(headers["content-length"]) == len(body)
    plain = gzip.decompress(body) if coding.startswith("gzip") else zlib.decompress(body)
    assert plain == b'{"rewritten":true}'


@pytest.mark.parametrize("coding", ["zstd", "br", "x-made-up"])
def test_a_body_ctxtop_cannot_decode_passes_unchanged_even_in_live_mode(
    isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch, coding: str
) -> None:
    monkeypatch.setattr(content_coding, "_optional", lambda coding: None)  # no zstd, no br
    seen: list[bytes] = []
    with answering(seen) as raw, proxy_to(raw.url) as proxy:
        proxy.server.set_rewriter(shorten)
        body = COMPRESSED[coding]
        status, _ = post(proxy.port, "/v1/messages", body, {"content-encoding": coding})
    assert status == 200
    [(headers, forwarded)] = [head_and_body(request) for request in seen]
    assert forwarded == body and headers["content-encoding"] == coding


def test_a_body_that_decodes_past_the_limit_is_not_decoded() -> None:
    bomb = gzip.compress(b"{" + b" " * 5_000_000 + b"}")
    assert len(bomb) < 10_000
    assert content_coding.decoded(bomb, "gzip", 1_000_000) is None
    assert content_coding.decoded(bomb, "gzip", 6_000_000) is not None
    assert content_coding.decoded(gzip.compress(BODY) + b"trailing", "gzip", 10**6) is None

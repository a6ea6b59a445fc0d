"""Upstream faults reach the agent as the upstream's own error or a 502 in the provider's
shape, and the proxy keeps serving; a stream cut upstream is cut for the agent too; an agent
that goes away mid-stream ends the upstream request; limits on both directions."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from proxy_upstream import proxy_to, sse_events, upstream
from test_forwarding import SESSION, anthropic_body, post, wait_for_lines

MB = 1024 * 1024


def free_port() -> int:
    """A port nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def cut_answer(port: int) -> bytes:
    """POST a Messages request whose streamed answer must break off: the part that came."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("POST", "/v1/messages", body=anthropic_body())
        response = connection.getresponse()
        assert response.status == 200
        with pytest.raises(http.client.IncompleteRead) as cut:
            response.read()
        return cut.value.partial
    finally:
        connection.close()


def test_a_refusing_upstream_is_a_502_in_the_providers_shape(isolated_dirs: Path) -> None:
    with proxy_to(f"http://127.0.0.1:{free_port()}") as proxy:
        status, _, answer = post(proxy.port, "/v1/messages", anthropic_body())
        gemini = post(proxy.port, "/v1beta/models/gemini-2.5-pro:generateContent", b"{}")
        openai = post(proxy.port, "/v1/responses", b"{}")
    assert status == 502
    error = json.loads(answer)
    assert error["type"] == "error" and error["error"]["type"] == "api_error"
    assert "cannot reach the upstream" in error["error"]["message"]
    assert gemini[0] == 502 and json.loads(gemini[2])["error"]["status"] == "UNAVAILABLE"
    assert openai[0] == 502 and json.loads(openai[2])["error"]["type"] == "server_error"


def test_a_hanging_upstream_is_a_502_after_the_read_timeout_and_the_proxy_still_serves(
    isolated_dirs: Path,
) -> None:
    with upstream("hang") as up, proxy_to(up.url, read_timeout=1.0) as proxy:
        status, _, answer = post(proxy.port, "/v1/messages", anthropic_body())
        up.set("sse")
        again = post(proxy.port, "/v1/messages", anthropic_body())
    assert status == 502 and "did not answer in time" in json.loads(answer)["error"]["message"]
    assert again[0] == 200 and again[2] == sse_events()


@pytest.mark.parametrize(("mode", "status"), [("status500", 500), ("status429", 429)])
def test_the_upstreams_own_error_reaches_the_agent_unchanged(
    isolated_dirs: Path, mode: str, status: int
) -> None:
    with upstream(mode) as up, proxy_to(up.url) as proxy:
        got, headers, answer = post(proxy.port, "/v1/messages", anthropic_body())
        up.set("sse")
        again = post(proxy.port, "/v1/messages", anthropic_body())
    assert got == status
    if status == 429:
        assert headers["retry-after"] == "17" and b"slow down" in answer
    else:
        assert b"upstream broke" in answer
    assert again[0] == 200


def test_a_stream_cut_upstream_is_cut_for_the_agent_and_the_proxy_still_serves(
    isolated_dirs: Path,
) -> None:
    with upstream("cut") as up, proxy_to(up.url) as proxy:
        partial = cut_answer(proxy.port)
        up.set("sse")
        again = post(proxy.port, "/v1/messages", anthropic_body())
    assert partial == sse_events()[: len(sse_events()) // 2]
    assert again[0] == 200 and again[2] == sse_events()


def test_an_agent_that_goes_away_mid_stream_ends_the_upstream_request(
    isolated_dirs: Path,
) -> None:
    with upstream("endless") as up, proxy_to(up.url) as proxy:
        connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=30)
        connection.request("POST", "/v1/messages", body=anthropic_body())
        response = connection.getresponse()
        assert response.read1(100).startswith(b"event: ping")
        connection.sock.close()  # the agent is gone (Ctrl-C, crash)
        connection.close()
        # The upstream sees its connection closed (its next write fails) well before the
        # 30 s its stream would last.
        assert up.server.gone.wait(20)
    [line] = wait_for_lines(SESSION, 1)
    assert line["outcome"] == "client_gone"


def test_fifty_concurrent_streams_each_arrive_whole(isolated_dirs: Path) -> None:
    stream = sse_events(count=40, pad=200)
    with upstream("sse", stream) as up, proxy_to(up.url) as proxy:
        bodies = [anthropic_body(n=i) for i in range(50)]
        with ThreadPoolExecutor(50) as pool:
            answers = list(pool.map(lambda body: post(proxy.port, "/v1/messages", body), bodies))
    assert [status for status, _, _ in answers] == [200] * 50
    assert all(answer == stream for _, _, answer in answers)
    assert sorted(s.body for s in up.seen) == sorted(bodies)


def test_a_20_mb_request_arrives_exactly_and_one_over_the_limit_is_refused(
    isolated_dirs: Path,
) -> None:
    big = anthropic_body(padding="y" * (20 * MB))
    with upstream() as up, proxy_to(up.url, max_request_bytes=24 * MB) as proxy:
        status, _, answer = post(proxy.port, "/v1/messages", big)
        over = post(proxy.port, "/v1/messages", anthropic_body(padding="z" * (25 * MB)))
    assert status == 200 and answer == sse_events()
    assert len(up.seen) == 1 and up.seen[0].body == big
    assert over[0] == 413
    assert json.loads(over[2])["error"]["type"] == "request_too_large"


def test_an_answer_over_the_limit_is_cut(isolated_dirs: Path) -> None:
    stream = sse_events(count=100, pad=1000)
    with upstream("sse", stream) as up, proxy_to(up.url, max_response_bytes=20_000) as proxy:
        partial = cut_answer(proxy.port)
    assert len(partial) <= 20_000 and stream.startswith(partial)


def test_redirects_are_passed_back_never_followed(isolated_dirs: Path) -> None:
    with upstream() as target, upstream("redirect") as up, proxy_to(up.url) as proxy:
        up.set("redirect", location=f"{target.url}/v1/messages")
        status, headers, _ = post(proxy.port, "/v1/messages", anthropic_body())
    assert status == 307 and headers["location"].startswith(target.url)
    assert target.seen == []


def test_a_rewriter_replaces_the_body_and_a_failing_one_forwards_the_original(
    isolated_dirs: Path,
) -> None:
    calls: list[tuple[str, str | None, bytes]] = []
    lock = threading.Lock()

    def shorter(protocol: str, session: str | None, body: bytes) -> bytes | None:
        with lock:
            calls.append((protocol, session, body))
        if b"BREAK" in body:
            raise ValueError("a bug in the rewriter")
        return b'{"rewritten":true}' if b"REWRITE" in body else None

    with upstream() as up, proxy_to(up.url) as proxy:
        proxy.server.set_rewriter(shorter)
        post(proxy.port, "/v1/messages", anthropic_body(tag="REWRITE"))
        post(proxy.port, "/v1/messages", anthropic_body(tag="KEEP"))
        post(proxy.port, "/v1/messages", anthropic_body(tag="BREAK"))
        proxy.server.set_rewriter(None)
        post(proxy.port, "/v1/messages", anthropic_body(tag="REWRITE"))
    assert [s.body for s in up.seen] == [
        b'{"rewritten":true}',
        anthropic_body(tag="KEEP"),
        anthropic_body(tag="BREAK"),
        anthropic_body(tag="REWRITE"),
    ]
    assert [(p, s) for p, s, _ in calls] == [
        ("anthropic", "0f6c2d1e-4b7a-4c1e-9a55-5d9e3c2b1a00")
    ] * 3
    lines = wait_for_lines(SESSION, 4)
    by_outcome = {bool(line["rewritten"]): line for line in lines}
    assert by_outcome[True]["messages"]["count"] == 0  # the figures are of the bytes sent
    assert any(line.get("rewrite_error") == "ValueError" for line in lines)

"""Nothing local can lock clients out of the proxy: connections that never finish their headers
and idle kept-alive ones are closed after their timeouts, the connections open at once are
capped (the longest waiting make room for a newcomer), and an overload is one line, not a
traceback a connection. (1,100 connections that never finished their headers, under an
open-file limit of 1,024, locked every client out with 264,000 tracebacks.) Bounded: a few
hundred connections, to 127.0.0.1 only."""

from __future__ import annotations

import http.client
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path

from proxy_upstream import proxy_to, upstream
from test_command import write_config
from test_forwarding import anthropic_body, post

HEAD_START = b"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n"  # headers never finished


def closed_by_peer(sock: socket.socket, wait: float = 15) -> bool:
    """Whether the proxy closes ``sock`` (within ``wait`` seconds: a bound, not a timing)."""
    sock.settimeout(wait)
    try:
        while data := sock.recv(65536):
            del data
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return True


@contextmanager
def stalled(port: int, count: int) -> Iterator[list[socket.socket]]:
    """``count`` connections that start a request and never finish its headers."""
    with ExitStack() as stack:
        socks = []
        for _ in range(count):
            sock = stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=10))
            sock.sendall(HEAD_START)
            socks.append(sock)
        yield socks


def test_unfinished_headers_and_idle_connections_are_closed(isolated_dirs: Path) -> None:
    settings = {"header_timeout": 0.5, "idle_timeout": 1.0, "read_timeout": 2.0}
    with upstream("hang") as up, proxy_to(up.url, **settings) as proxy:
        with stalled(proxy.port, 3) as socks:
            silent = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
            assert all(closed_by_peer(sock) for sock in [*socks, silent])
            silent.close()
        # A request that takes longer than both (the upstream stays silent until the read
        # timeout) is not cut: its answer is the proxy's 502.
        assert post(proxy.port, "/v1/messages", anthropic_body())[0] == 502
        up.set("json")
        kept = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
        kept.request("POST", "/v1/messages", body=anthropic_body())
        assert kept.getresponse().read()  # kept alive, then left idle
        assert kept.sock is not None and closed_by_peer(kept.sock)
        kept.close()


def test_when_every_connection_is_serving_a_newcomer_gets_a_503(isolated_dirs: Path) -> None:
    settings = {"max_connections": 2, "read_timeout": 2.0}
    with upstream("hang") as up, proxy_to(up.url, **settings) as proxy, ThreadPoolExecutor() as run:
        calls = [run.submit(post, proxy.port, "/v1/messages", anthropic_body()) for _ in "ab"]
        for _ in range(200):  # both requests are at the upstream: both slots serving
            if len(up.seen) == 2:
                break
            time.sleep(0.05)
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as newcomer:
            answer = newcomer.makefile("rb").read()  # answered before it says anything
        assert [call.result()[0] for call in calls] == [502, 502]  # the upstream's silence
    assert answer.startswith(b"HTTP/1.1 503 ") and b"every connection is serving" in answer


def low_file_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


def test_hundreds_of_stalled_connections_do_not_lock_a_client_out(isolated_dirs: Path) -> None:
    """300 stalled connections against ``ctxtop proxy`` under an open-file limit of 256 (its cap
    of 256 connections lowered to fit): a well-behaved client is served, and stderr has one line
    about the overload, no "Too many open files"."""
    with upstream("json") as up:
        write_config(
            isolated_dirs,
            f"proxy:\n  port: 0\n  header_timeout: 60\n  upstreams:\n    anthropic: {up.url}\n",
        )
        err_path = isolated_dirs / "proxy.err"
        with err_path.open("w") as err:
            process = subprocess.Popen(
                [sys.executable, "-m", "ctxtop", "proxy"], stdout=subprocess.PIPE, stderr=err,
                text=True, env=dict(os.environ), preexec_fn=low_file_limit,
            )  # fmt: skip
        try:
            assert process.stdout is not None
            port = int(process.stdout.readline().split("127.0.0.1:")[1].split()[0])
            with stalled(port, 300) as socks:
                status, _, _ = post(port, "/v1/messages", anthropic_body())
                assert status == 200
                closed = sum(closed_by_peer(sock, wait=0.5) for sock in socks[:100])
        finally:
            process.send_signal(signal.SIGINT)
            process.communicate(timeout=30)
    err_text = err_path.read_text()
    assert "Traceback" not in err_text and len(err_text) < 4096, err_text[:2000]
    overload = [line for line in err_text.splitlines() if "connections open" in line]
    assert len(overload) == 1, err_text[:2000]
    assert closed == 100  # the oldest stalled ones made room
    assert len(up.seen) == 1

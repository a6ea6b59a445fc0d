"""A live plan file that is not a plan the proxy can read (a named pipe, a link to /dev/zero, a
file far too big, damaged JSON) never stops the proxy: the session's requests go through as the
agent sent them, and one line names the file. (A FIFO plan used to block the proxy's event loop
for every session; /dev/zero was read until a MemoryError.)"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from proxy_upstream import Upstream, upstream
from test_forwarding import SESSION, anthropic_body, post

from ctxtop.engine.proxy.live_plan import PLAN_LIMIT, VERSION, plan_path
from ctxtop.engine.proxy.rewrite_live import LiveRewriter
from ctxtop.engine.proxy.server import ProxyServer, RunningProxy
from ctxtop.engine.proxy.settings import ProxySettings


def fifo(path: Path) -> None:
    os.mkfifo(path)


def dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def too_big(path: Path) -> None:
    with path.open("wb") as handle:  # sparse: no disk used
        handle.truncate(PLAN_LIMIT + 1)


def damaged(path: Path) -> None:
    plan = {"version": VERSION, "kind": "edit", "figures": {"tokens_after": "lots"}}
    path.write_text(json.dumps(plan))


PLANS: dict[str, Callable[[Path], None]] = {
    "fifo": fifo,
    "dev-zero": dev_zero,
    "too-big": too_big,
    "damaged": damaged,
}


@contextmanager
def live_proxy() -> Iterator[tuple[Upstream, RunningProxy]]:
    """The proxy with the live plans' rewriter, as ``ctxtop proxy`` runs it."""
    with upstream("sse") as server:
        settings = ProxySettings(port=0).with_upstreams(anthropic=server.url)
        running = ProxyServer(settings, rewriter=LiveRewriter()).start_in_thread()
        try:
            yield server, running
        finally:
            running.stop()


@pytest.mark.parametrize("make", PLANS.values(), ids=PLANS.keys())
def test_a_plan_the_proxy_cannot_read_is_ignored_with_one_line(
    make: Callable[[Path], None], caplog: pytest.LogCaptureFixture
) -> None:
    path = plan_path(SESSION)
    path.parent.mkdir(parents=True)
    make(path)
    body = anthropic_body()
    with caplog.at_level(logging.WARNING, "ctxtop.proxy"), live_proxy() as (server, proxy):
        for _ in range(3):
            status, _, _ = post(proxy.port, "/v1/messages", body)
            assert status == 200
    assert [seen.body for seen in server.seen] == [body] * 3  # as the agent sent it
    lines = [record.getMessage() for record in caplog.records if record.name == "ctxtop.proxy"]
    assert len(lines) == 1 and str(path) in lines[0], lines

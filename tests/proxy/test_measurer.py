"""Measuring runs off the proxy's hot path (one measuring thread, a bounded queue): every request
forwarded is measured and stored, even a burst larger than the queue, and the agent's answers
do not wait for the measuring, even when it is held up."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from measurement_lines import read_measurements
from proxy_upstream import proxy_to, sse_events, upstream
from test_forwarding import SESSION, anthropic_body, post, wait_for_lines

from ctxtop.engine.proxy.measurer import SLOTS


def test_a_burst_larger_than_the_queue_is_measured_whole(isolated_dirs: Path) -> None:
    count = 3 * SLOTS
    bodies = [anthropic_body(n=i) for i in range(count)]
    with upstream() as up, proxy_to(up.url) as proxy:
        with ThreadPoolExecutor(count) as pool:
            answers = list(pool.map(lambda body: post(proxy.port, "/v1/messages", body), bodies))
        assert [status for status, _, _ in answers] == [200] * count
    # stopped: every request handed over was measured first
    lines = read_measurements(SESSION)
    assert len(lines) == count and proxy.server.served == count
    assert {line["request_bytes"] for line in lines} == {len(body) for body in bodies}


def test_answers_do_not_wait_for_a_held_up_measurement(isolated_dirs: Path) -> None:
    """The token counter's lock is held (as a long count in another thread would hold it): the
    measuring thread waits on it. The agent's requests are answered all the same, more of them
    than the queue holds; once the lock is free, every one is measured, in order."""
    count = SLOTS + 4
    with upstream() as up, proxy_to(up.url) as proxy:
        with proxy.server.measurer.counts.lock:
            answers = [post(proxy.port, "/v1/messages", anthropic_body(n=i)) for i in range(count)]
            assert all(answer[0] == 200 and answer[2] == sse_events() for answer in answers)
            assert proxy.server.served == 0 and read_measurements(SESSION) == []
        lines = wait_for_lines(SESSION, count)
    assert [line["request_bytes"] for line in lines] == [
        len(anthropic_body(n=i)) for i in range(count)
    ]

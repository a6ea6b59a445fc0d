"""Measuring the proxied requests off the proxy's hot path: one measuring thread, fed through a
bounded queue once each request's answer has gone to the agent.

Measuring a request (decoding its body, counting the tokens of every part, hashing it) costs
1-4 ms of CPU for a 0.2-1 MB body, holding the interpreter's lock for part of it. Each request
used to be measured by the loop's default executor, two hops each (measure, then append), up
to six threads at once: under a burst, six threads wanting the lock left the loop forwarding
the next requests a seventh of it. Now one thread measures and appends, one request at a time
and in order, so the loop always gets at least half.

At most ``SLOTS`` requests wait in the queue; more wait in the proxy (their measuring task
waits for a slot, the agent's answer does not), so a burst is measured late, never lost.
(A measuring process was tried: the proxy's own CPU fell from 5.2-5.8 to 3.5-4.3 ms a request,
but the process and the copy of each body through a pipe added 2.2-2.6 ms of CPU elsewhere,
and on the shared 2-core machine bench/proxy_latency.py's p95 was worse in 7 runs of 7.)
"""

from __future__ import annotations

import asyncio
import queue
import threading
from typing import Any

from ctxtop.engine.proxy.sent import Sent
from ctxtop.engine.proxy.store import append_measurement
from ctxtop.engine.proxy.tally import TextCounts

SLOTS = 16  # requests handed to the measuring thread and not measured yet, at most

Line = dict[str, Any] | None  # a request's stored line (None: it could not be stored)
Job = tuple[Sent, dict[str, Any], asyncio.AbstractEventLoop, "asyncio.Future[Line]"]


def measure_and_store(sent: Sent, answer: dict[str, Any], counts: TextCounts) -> Line:
    """The request's line, appended to its session's file; None when it could not be (a full
    disk loses the figure, never the agent's request)."""
    line = sent.line(answer, counts)
    try:
        append_measurement(line["session_id"], line)
    except OSError:
        return None
    return line


def _settle(future: asyncio.Future[Line], line: Line) -> None:
    if not future.done():
        future.set_result(line)


def _fail(future: asyncio.Future[Line], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)


class Measurer:
    """``await measure(sent, answer)``: the request's stored line (None when it could not be
    stored), measured in the measuring thread. ``stop()`` ends the thread once it is idle."""

    def __init__(self, slots: int = SLOTS) -> None:
        self.slots = asyncio.Semaphore(slots)
        self.jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self.thread: threading.Thread | None = None
        self.counts = TextCounts()  # the texts' token counts, remembered while the proxy runs

    async def measure(self, sent: Sent, answer: dict[str, Any]) -> Line:
        async with self.slots:
            if self.thread is None:
                self.thread = threading.Thread(
                    target=self._work, name="ctxtop-proxy-measure", daemon=True
                )
                self.thread.start()
            loop = asyncio.get_running_loop()
            future: asyncio.Future[Line] = loop.create_future()
            self.jobs.put((sent, answer, loop, future))
            return await future

    def _work(self) -> None:
        while (job := self.jobs.get()) is not None:
            sent, answer, loop, future = job
            try:
                line = measure_and_store(sent, answer, self.counts)
            except Exception as error:  # a request that breaks the measuring: that one only
                loop.call_soon_threadsafe(_fail, future, error)
                continue
            loop.call_soon_threadsafe(_settle, future, line)

    async def stop(self) -> None:
        """After the last request was handed over (and measured): the thread ends."""
        thread, self.thread = self.thread, None
        if thread is not None:
            self.jobs.put(None)
            await asyncio.to_thread(thread.join)

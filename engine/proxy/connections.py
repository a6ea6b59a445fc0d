"""Bounds on the proxy's client connections, whoever opens them (any local process can).

- A new connection must finish its request's headers within ``header_timeout``; a kept-alive
  connection may wait ``idle_timeout`` for its next request (longer than the agents' HTTP
  clients keep an idle connection, so they close it first), and once that request starts
  arriving, its headers are due within ``header_timeout`` too. A connection past its deadline
  is closed. A request being served has no deadline here (the upstream's timeouts apply).
- At most ``limit`` connections are open: at the limit, the one waiting longest (idle, or
  still sending headers) is closed for the newcomer; when every one is serving a request, the
  newcomer is answered 503 and closed. Either is logged once a minute at most, never once a
  connection (1,100 connections that never finished their headers used to exhaust the file
  descriptors: 264,000 tracebacks, and no client was served).

Each connection is aiohttp's own protocol behind a thin ``Connection`` that sees it open,
receive and close; the app's middleware says when a request starts and ends (``serving``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

log = logging.getLogger("ctxtop.proxy")

NOTICE_EVERY = 60.0  # seconds between two lines about the same overload
FDS_KEPT = 64  # descriptors left for files, the listener, the measuring thread
BUSY_TEXT = b"ctxtop proxy: every connection is serving a request, try again\n"
BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nConnection: close\r\n"
    b"Content-Length: %d\r\n\r\n%s" % (len(BUSY_TEXT), BUSY_TEXT)
)
ACCEPT_FAILED = "socket.accept() out of system resource"


def descriptor_room() -> int:
    """Connections the process's open-file limit leaves room for: each client connection may
    hold an upstream one too."""
    try:
        import resource  # POSIX only
    except ImportError:
        return 1 << 20
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 1 << 20
    return max(8, (soft - FDS_KEPT) // 2)


class Connection(asyncio.Protocol):
    """One client connection: aiohttp's protocol (``inner``) under the guard's deadlines."""

    def __init__(self, guard: ConnectionGuard, inner: asyncio.Protocol) -> None:
        self.guard = guard
        self.inner: asyncio.Protocol | None = inner
        self.transport: asyncio.Transport | None = None
        self.serving = 0  # requests in the app's hands
        self.waiting_since = 0.0
        self.receiving = False  # bytes of the next request have arrived
        self.deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        if not self.guard.admit(self):
            self.inner = None
            transport.write(BUSY)
            transport.close()
            return
        assert self.inner is not None
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.inner is None:
            return
        if not self.serving and not self.receiving:
            self.receiving = True
            self.guard.headers_due(self)
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received() if self.inner is not None else None

    def connection_lost(self, exc: Exception | None) -> None:
        self.guard.forget(self)
        if self.inner is not None:
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


class ConnectionGuard:
    def __init__(self, limit: int, header_timeout: float, idle_timeout: float) -> None:
        self.limit = limit
        self.header_timeout = header_timeout
        self.idle_timeout = idle_timeout
        self.open: dict[asyncio.BaseTransport, Connection] = {}
        self._noticed: dict[str, float] = {}

    def factory(self, make_inner: Callable[[], Any]) -> Callable[[], Connection]:
        """The protocol factory for ``loop.create_server``, around aiohttp's (``make_inner``)."""
        return lambda: Connection(self, make_inner())

    def admit(self, connection: Connection) -> bool:
        """Whether ``connection`` is served (making room at the limit); False: refuse it."""
        if len(self.open) >= self.limit:
            waiting = [c for c in self.open.values() if not c.serving]
            self._notice(
                "full",
                f"ctxtop proxy: {self.limit} connections open, the most it keeps "
                "(proxy.max_connections, fewer under a low ulimit -n): the longest waiting are "
                "closed for new ones, and new ones refused while every one is serving a request",
            )
            if not waiting:
                return False
            oldest = min(waiting, key=lambda c: c.waiting_since)
            self.forget(oldest)
            oldest.close()
        assert connection.transport is not None
        self.open[connection.transport] = connection
        self._wait(connection, self.header_timeout)
        return True

    def headers_due(self, connection: Connection) -> None:
        """A request started arriving on a waiting connection: its headers are due soon."""
        deadline = connection.deadline
        due = asyncio.get_running_loop().time() + self.header_timeout
        if deadline is None or deadline.when() > due:
            self._wait(connection, self.header_timeout)

    @contextmanager
    def serving(self, transport: asyncio.BaseTransport | None) -> Iterator[None]:
        """Around the app's handling of one request (its headers are in): no deadline."""
        connection = self.open.get(transport) if transport is not None else None
        if connection is None:
            yield
            return
        connection.serving += 1
        self._cancel(connection)
        try:
            yield
        finally:
            connection.serving -= 1
            if not connection.serving and connection.transport in self.open:
                connection.receiving = False
                self._wait(connection, self.idle_timeout)

    def forget(self, connection: Connection) -> None:
        self._cancel(connection)
        if connection.transport is not None:
            self.open.pop(connection.transport, None)

    def close_all(self) -> None:
        for connection in list(self.open.values()):
            self._cancel(connection)
        self.open.clear()

    def _wait(self, connection: Connection, seconds: float) -> None:
        self._cancel(connection)
        loop = asyncio.get_running_loop()
        connection.waiting_since = loop.time()
        connection.deadline = loop.call_later(seconds, self._expire, connection)

    def _cancel(self, connection: Connection) -> None:
        if connection.deadline is not None:
            connection.deadline.cancel()
            connection.deadline = None

    def _expire(self, connection: Connection) -> None:
        connection.deadline = None
        if not connection.serving:
            self.forget(connection)
            connection.close()

    def _notice(self, kind: str, line: str) -> None:
        now = time.monotonic()
        if now - self._noticed.get(kind, -NOTICE_EVERY) >= NOTICE_EVERY:
            self._noticed[kind] = now
            log.warning("%s", line)

    def loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """The proxy loop's exception handler: the accept loop out of file descriptors is one
        line a minute, not a traceback per attempt; anything else as asyncio reports it."""
        if context.get("message") == ACCEPT_FAILED:
            self._notice(
                "descriptors",
                "ctxtop proxy: out of file descriptors, new connections wait "
                "(lower proxy.max_connections, or raise the limit: ulimit -n)",
            )
            return
        loop.default_exception_handler(context)

"""``ProxyServer``: the loopback proxy live mode runs (aiohttp server and client).

Only clients on the loopback interface are served (the server binds 127.0.0.1, and a request
from any other address, from a browser page (``Origin``), for another host, or in proxy form
(``GET http://host/…``, ``CONNECT``) is refused), and each request goes to the one upstream its
API is configured with: never anywhere the request names.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import aiohttp
from aiohttp import web

from ctxtop.engine.proxy.connections import ConnectionGuard, descriptor_room
from ctxtop.engine.proxy.content_coding import encoded
from ctxtop.engine.proxy.forward import Exchange, error_response, forward
from ctxtop.engine.proxy.loopback import is_loopback
from ctxtop.engine.proxy.measurer import Measurer
from ctxtop.engine.proxy.rewrite import RewriteHook, Rewriter, rewritten
from ctxtop.engine.proxy.rewrite_common import decode
from ctxtop.engine.proxy.routes import Route, mismatch, route_of
from ctxtop.engine.proxy.sent import Sent
from ctxtop.engine.proxy.session_id import header_session_id, session_id
from ctxtop.engine.proxy.settings import ProxySettings

HOST = "127.0.0.1"
METHODS = ("GET", "POST", "HEAD")


def refusal(request: web.Request) -> str | None:
    """Why the proxy will not serve ``request``, or None."""
    if not is_loopback(request.remote):
        return "only clients on this machine's loopback interface are served"
    if request.method not in METHODS:
        return f"method {request.method} is not forwarded"
    if not request.raw_path.startswith("/"):
        return "not an open proxy: requests in proxy form are refused"
    if "Origin" in request.headers:
        return "requests from web pages are refused"
    host = (request.host or "").rsplit(":", 1)[0].strip("[]")
    if host not in ("127.0.0.1", "localhost", "::1"):
        return "not an open proxy: only requests for this loopback address are served"
    return None


def shape_of(request: web.Request) -> str:
    """Whose error shape ctxtop's own errors for ``request`` take: its path's API's."""
    route = route_of(request.method, request.path, request.headers)
    return route.upstream if route is not None else "openai"


def _rewrite(
    rewriter: Rewriter, sent: Sent, known: str | None
) -> tuple[str | None, bytes, str | None]:
    """(session id, the body to send, the rewriter's error): one worker-thread hop. A body
    with a content coding is rewritten decoded, then encoded the same way; one ctxtop cannot
    decode or encode again is sent as the agent sent it."""
    plain = sent.plain(sent.agent_body)
    if plain is None:
        return known, sent.agent_body, None
    sid = known or session_id(sent.headers, decode(plain))
    body, error = rewritten(rewriter, sent.route.protocol, sid, plain)
    if body is plain:
        return sid, sent.agent_body, error
    wire = encoded(body, sent.encoding) if sent.encoding else body
    return sid, wire if wire is not None else sent.agent_body, error


def _idle(rewriter: Rewriter, sid: str | None) -> bool:
    """True when the rewriter says (cheaply, on the loop) it leaves this session alone."""
    active = getattr(rewriter, "active", None)
    return sid is not None and callable(active) and not active(sid)


class ProxyServer:
    """The proxy. ``await start()`` (in a running loop) or ``start_in_thread()``."""

    def __init__(
        self,
        settings: ProxySettings,
        rewriter: Rewriter | None = None,
        on_measured: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        """``on_measured`` is called (in the proxy's loop) with each request's line once
        stored."""
        self.settings = settings
        self.on_measured = on_measured
        self.hook = RewriteHook(rewriter)
        self.port = 0
        self.served = 0  # model requests measured
        self._runner: web.AppRunner | None = None
        self._listener: asyncio.Server | None = None
        self.connections = ConnectionGuard(
            min(settings.max_connections, descriptor_room()),
            settings.header_timeout,
            settings.idle_timeout,
        )
        self._session: aiohttp.ClientSession | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.measurer = Measurer()

    def set_rewriter(self, rewriter: Rewriter | None) -> None:
        """From any thread; the next request on uses it (None: the agent's own bytes again)."""
        self.hook.set(rewriter)

    def make_app(self) -> web.Application:
        app = web.Application(
            client_max_size=self.settings.max_request_bytes, middlewares=[self._guard]
        )
        app.router.add_route("*", "/{tail:.*}", self._handle)
        return app

    async def start(self, host: str = HOST) -> int:
        """Serve on ``host`` (127.0.0.1; tests bind other addresses to see them refused)."""
        timeout = aiohttp.ClientTimeout(
            total=None, connect=self.settings.connect_timeout, sock_read=self.settings.read_timeout
        )
        self._session = aiohttp.ClientSession(
            timeout=timeout,
            auto_decompress=False,
            trust_env=False,  # never send the agent's requests through another proxy
            cookie_jar=aiohttp.DummyCookieJar(),
            skip_auto_headers=("User-Agent", "Content-Type"),
            connector=aiohttp.TCPConnector(limit=0),
        )
        self._runner = web.AppRunner(
            self.make_app(),
            handler_cancellation=True,
            access_log=None,
            auto_decompress=False,  # the agent's bytes: forwarded as sent unless a plan applies
            keepalive_timeout=self.settings.idle_timeout,
        )
        await self._runner.setup()
        assert self._runner.server is not None
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(self.connections.loop_exception)
        # aiohttp's protocol behind the connection guard (timeouts and the cap).
        self._listener = await loop.create_server(
            self.connections.factory(self._runner.server),
            host,
            self.settings.port,
            reuse_address=True,
        )
        sockets = self._listener.sockets
        self.port = int(sockets[0].getsockname()[1]) if sockets else self.settings.port
        return self.port

    async def stop(self) -> None:
        if self._listener is not None:
            self._listener.close()  # no new connections; aiohttp's cleanup closes the others
        self.connections.close_all()
        if self._runner is not None:
            await self._runner.cleanup()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.measurer.stop()
        if self._session is not None:
            await self._session.close()

    def start_in_thread(self) -> RunningProxy:
        return RunningProxy(self)

    @web.middleware
    async def _guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
        with self.connections.serving(request.transport):  # no header or idle deadline now
            return await self._served(request, handler)

    async def _served(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """Refuse what is not served; a fault of ctxtop's own before the answer started is a
        500 in the provider's error shape (aiohttp's would be plain text the agent cannot
        read)."""
        reason = refusal(request)
        if reason is not None:
            return error_response(shape_of(request), 403, f"ctxtop proxy: {reason}")
        try:
            response: web.StreamResponse = await handler(request)
        except (web.HTTPException, asyncio.CancelledError):
            raise
        except Exception as error:
            if request.writer is None or request.writer.output_size:
                raise  # the answer has started: the connection is cut
            message = f"ctxtop proxy: internal error ({type(error).__name__})"
            return error_response(shape_of(request), 500, message)
        return response

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        route = route_of(request.method, request.path, request.headers)
        if route is None:
            return error_response("openai", 404, f"ctxtop proxy: no API at {request.path}")
        wrong = mismatch(route, request.headers)
        if wrong is not None:
            return error_response(route.upstream, 400, f"ctxtop proxy: {wrong}")
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            limit = self.settings.max_request_bytes // (1024 * 1024)
            return error_response(route.upstream, 413, f"ctxtop proxy: request over {limit} MB")
        url = self.settings.upstreams[route.upstream] + request.path_qs
        assert self._session is not None
        exchange = Exchange()
        if not route.model_call:
            return await forward(
                request, self._session, url, body, route, self.settings.max_response_bytes, exchange
            )
        return await self._model_call(request, route, url, body, exchange)

    async def _model_call(
        self, request: web.Request, route: Route, url: str, body: bytes, exchange: Exchange
    ) -> web.StreamResponse:
        """Offer the body to the rewriter, forward it, then measure it (after the answer, in
        the measuring thread: the answer never waits for it)."""
        assert self._session is not None
        rewriter = self.hook.current()
        limit = self.settings.max_request_bytes
        sent = Sent(route, request.path, dict(request.headers), body, limit)
        known = header_session_id(sent.headers)  # most agents send it: no decoding needed
        if rewriter is not None and not _idle(rewriter, known):
            sent.session_id, sent.body, sent.rewrite_error = await asyncio.to_thread(
                _rewrite, rewriter, sent, known
            )
        try:
            return await forward(
                request,
                self._session,
                url,
                sent.body,
                route,
                self.settings.max_response_bytes,
                exchange,
            )
        finally:
            exchange.total_ms = exchange.elapsed_ms()
            task = asyncio.ensure_future(self._record(sent, exchange))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _record(self, sent: Sent, exchange: Exchange) -> None:
        """Measure and store the request (in the measuring thread: see ``measurer``)."""
        answer = {
            "status": exchange.status,
            "outcome": exchange.outcome,
            "usage": exchange.usage or None,
            "first_byte_ms": exchange.first_byte_ms,
            "total_ms": exchange.total_ms,
        }
        try:
            line = await self.measurer.measure(sent, answer)
        except Exception:
            return  # a body the measurement cannot read is forwarded all the same
        if line is None:
            return  # a full disk loses the figure, never the agent's request
        self.served += 1
        if self.on_measured is not None:
            self.on_measured(line)


class RunningProxy:
    """The proxy on its own event loop in a daemon thread (the dashboard's ``--proxy``)."""

    def __init__(self, server: ProxyServer) -> None:
        self.server = server
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="ctxtop-proxy", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error

    @property
    def port(self) -> int:
        return self.server.port

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self.server.start())
        except BaseException as error:  # reported to the starting thread
            self._error = error
            self._ready.set()
            return
        self._ready.set()
        self.loop.run_forever()

    def stop(self) -> None:
        if self._error is not None:
            return
        future = asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop)
        future.result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)
        self.loop.close()

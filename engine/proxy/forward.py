"""One request forwarded to its upstream and the answer streamed back as it arrives.

The agent's bytes go upstream unchanged unless a rewriter replaced them; the answer's bytes
reach the agent as they come (the usage is read from a copy on the side, after each chunk is
written). Faults before the answer started reach the agent as a 502 in the provider's error
shape; a fault mid-stream cuts the agent's connection (a truncated stream, never a clean end).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web

from ctxtop.engine.proxy.routes import Route
from ctxtop.engine.proxy.shapes import error_body
from ctxtop.engine.proxy.usage import UsageScanner

# Headers that belong to one connection, not to the message (RFC 9110 7.6.1), the ones aiohttp
# sets itself from the body it sends, and ``Expect``: the proxy answers the agent's
# ``100-continue`` itself and forwards the whole body (an upstream that sends no 100 of its own
# would otherwise never get it).
HOP_BY_HOP = frozenset(
    {
        "connection",
        "expect",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)


@dataclass
class Exchange:
    """What the measurement line needs to know of one forwarded request (figures only)."""

    status: int = 0
    response_bytes: int = 0
    first_byte_ms: float | None = None
    total_ms: float = 0.0
    outcome: str = (
        "ok"  # ok | upstream_error | upstream_timeout | cut_mid_stream | client_gone | too_large
    )
    usage: dict[str, int] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)

    def elapsed_ms(self) -> float:
        return round((time.perf_counter() - self.started) * 1000, 2)


def upstream_headers(request: web.Request) -> dict[str, str]:
    """The agent's headers for the upstream: all but the hop-by-hop ones (keys and auth pass
    through untouched), and an uncompressed answer so its usage can be read on the side."""
    headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
    headers = {k: v for k, v in headers.items() if k.lower() != "accept-encoding"}
    headers["Accept-Encoding"] = "identity"
    return headers


def error_response(route_upstream: str, status: int, message: str) -> web.Response:
    return web.Response(
        status=status,
        body=error_body(route_upstream, status, message),
        content_type="application/json",
    )


def _answer_headers(upstream: aiohttp.ClientResponse) -> dict[str, str]:
    return {
        k: v
        for k, v in upstream.headers.items()
        if k.lower() not in HOP_BY_HOP - {"content-length"}
    }


async def forward(
    request: web.Request,
    session: aiohttp.ClientSession,
    url: str,
    body: bytes,
    route: Route,
    limit: int,
    exchange: Exchange,
) -> web.StreamResponse:
    """Send ``body`` to ``url`` and stream the answer back to the agent."""
    scanner = UsageScanner(route.protocol) if route.model_call else None
    try:
        upstream = await session.request(
            request.method, url, data=body, headers=upstream_headers(request), allow_redirects=False
        )
    except (TimeoutError, aiohttp.ServerTimeoutError):
        exchange.outcome, exchange.status = "upstream_timeout", 502
        return error_response(
            route.upstream, 502, "ctxtop proxy: the upstream did not answer in time"
        )
    except aiohttp.ClientError as error:
        exchange.outcome, exchange.status = "upstream_error", 502
        return error_response(
            route.upstream, 502, f"ctxtop proxy: cannot reach the upstream ({type(error).__name__})"
        )
    try:
        return await _stream(request, upstream, scanner, limit, exchange)
    except asyncio.CancelledError:  # the agent went away (aiohttp cancels the handler)
        exchange.outcome = "client_gone"
        raise
    finally:
        if exchange.outcome == "ok" and upstream.content.at_eof():
            upstream.release()  # read whole: the connection goes back to the pool
        else:
            upstream.close()  # never keep a half-read answer: closing cancels it upstream
        if scanner is not None:
            exchange.usage = scanner.usage


async def _stream(
    request: web.Request,
    upstream: aiohttp.ClientResponse,
    scanner: UsageScanner | None,
    limit: int,
    exchange: Exchange,
) -> web.StreamResponse:
    exchange.status = upstream.status
    answer = web.StreamResponse(
        status=upstream.status, reason=upstream.reason, headers=_answer_headers(upstream)
    )
    await answer.prepare(request)
    try:
        async for chunk in upstream.content.iter_any():
            exchange.response_bytes += len(chunk)
            if exchange.response_bytes > limit:
                exchange.outcome = "too_large"
                return _cut(request, answer)
            if exchange.first_byte_ms is None:
                exchange.first_byte_ms = exchange.elapsed_ms()
            await answer.write(chunk)
            if scanner is not None:
                scanner.feed(chunk)
    except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError, TimeoutError) as error:
        if isinstance(error, ConnectionResetError) or _client_gone(request):
            exchange.outcome = "client_gone"
            raise
        exchange.outcome = "cut_mid_stream"
        return _cut(request, answer)
    await answer.write_eof()
    return answer


def _client_gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


def _cut(request: web.Request, answer: web.StreamResponse) -> web.StreamResponse:
    """End the agent's connection without a proper end of the answer, so the agent sees the
    stream broken (as it would from the provider) and not a complete short answer."""
    answer.force_close()
    if request.transport is not None:
        request.transport.abort()
    return answer

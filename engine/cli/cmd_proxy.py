"""``ctxtop proxy``: live mode's loopback proxy without the dashboard; one line per model
request (whose session, what the prompt held, what the answer reported), and the settings'
automatic live policy (``live: auto``) applied to the proxied sessions as the dashboard does."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import signal
import sys
from typing import TYPE_CHECKING, Any

from ctxtop.engine.agents import proxied
from ctxtop.engine.errors import CtxtopError

# The server (aiohttp) is imported when the proxy starts: `ctxtop --help` lists this command.
if TYPE_CHECKING:
    from ctxtop.engine.live.auto_live import AutoLive
    from ctxtop.engine.proxy.settings import ProxySettings


def start_lines(port: int) -> list[str]:
    """How to start each agent through the proxy on ``port``."""
    url = f"http://127.0.0.1:{port}"
    return [f"  {use.name + ':':<14}{use.setup_line(url)}" for use in proxied()]


def request_line(line: dict[str, Any]) -> str:
    """One measured request as the headless proxy prints it."""
    usage = line.get("usage") or {}
    reported = f"reported {usage['input_tokens']}" if "input_tokens" in usage else "no usage"
    return (
        f"{line.get('session_id') or 'unknown'} {line['protocol']} {line['status']}: "
        f"system {line['system']['tokens']}, tools {line['tools']['tokens']} "
        f"({line['tools']['count']}), messages {line['messages']['tokens']} "
        f"({line['messages']['count']}), breakpoints {len(line['breakpoints'])}; {reported}"
    )


def settings_from(args: argparse.Namespace) -> ProxySettings:
    from ctxtop.engine.proxy.settings import load_proxy_settings, port_number

    settings = load_proxy_settings()
    if args.port is not None:
        settings = dataclasses.replace(settings, port=port_number(args.port, "--port"))
    return settings


def say(line: str) -> None:
    print(line, flush=True)


async def serve(settings: ProxySettings, auto: AutoLive) -> None:
    import asyncio

    from ctxtop.engine.live.auto_live import AutoLiveWatch
    from ctxtop.engine.proxy.rewrite_live import LiveRewriter
    from ctxtop.engine.proxy.server import ProxyServer
    from ctxtop.engine.proxy.store import measurements_dir

    watch = AutoLiveWatch(auto, report=say)

    def measured(line: dict[str, Any]) -> None:
        say(request_line(line))
        watch.seen(line.get("session_id"))  # the settings' live: auto policy, if on

    server = ProxyServer(
        settings,
        rewriter=LiveRewriter(),  # live plans (ctxtop edit --live ...) apply from the next request
        on_measured=measured,
    )
    try:
        port = await server.start()
    except BaseException as error:
        await server.stop()  # its client session too: no "Unclosed client session" at exit
        if not isinstance(error, OSError):
            raise
        raise CtxtopError(
            f"127.0.0.1:{settings.port}: cannot listen ({error.strerror or error})"
        ) from None
    print(f"ctxtop proxy on http://127.0.0.1:{port} (loopback only); start an agent through it:")
    print("\n".join(start_lines(port)))
    print(f"measurements: {measurements_dir()}/<session>.jsonl", flush=True)
    if auto.action != "off":
        say(f"automatic live policy: {auto.action} a session once its fill passes {auto.at:.0%}")
    stopped = asyncio.Event()
    with contextlib.suppress(NotImplementedError):  # SIGTERM stops as ctrl+c does
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopped.set)
    try:
        await stopped.wait()
    finally:
        await server.stop()  # the requests forwarded so far are all measured first
        await asyncio.to_thread(watch.close)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from ctxtop.engine.live.auto_live import load_auto_live
    from ctxtop.engine.safety.terminal import one_line

    settings = settings_from(args)
    for notice in settings.notices:  # unknown keys, plain http to another machine
        print(f"ctxtop: {one_line(notice)}", file=sys.stderr, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(settings, load_auto_live()))
    print("ctxtop proxy stopped", file=sys.stderr)
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "proxy",
        help="live mode's loopback proxy: measure every request an agent sends",
        description=(
            "Forward the agent's model requests (Anthropic Messages, OpenAI Responses and Chat "
            "Completions, Gemini) to the provider, measuring each one's exact composition into "
            "the data dir. Loopback clients only; upstreams from the settings' proxy: block."
        ),
    )
    parser.add_argument("--port", type=int, help="port on 127.0.0.1 (default 8787; 0: any free)")
    parser.set_defaults(func=run)

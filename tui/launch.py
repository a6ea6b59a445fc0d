"""Opening the dashboard: which session to follow (or the demo), then the Textual app.

Only what the first screen needs is imported on the way: the proxy (aiohttp, ~0.16 s of CPU)
only with ``--proxy``, the sessions listing only when no file is named.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ctxtop.engine.config import load_settings
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.live.demo import DEMO_SESSION, DemoReplay
from ctxtop.engine.live.locate import choose, searched
from ctxtop.engine.safety.terminal import one_line

if TYPE_CHECKING:
    from ctxtop.engine.proxy.server import RunningProxy


def build_app(
    args: argparse.Namespace, demo_dir: Path | None = None, proxy_port: int | None = None
) -> object:
    from ctxtop.tui.app import CtxtopApp

    settings = load_settings()
    if args.demo:
        folder = demo_dir or Path(tempfile.mkdtemp(prefix="ctxtop-demo-"))
        demo = DemoReplay(folder / DEMO_SESSION[-1])
        return CtxtopApp(demo.target, settings=settings, demo=demo)
    target = choose(args.session, args.agent)
    # With no file named and several sessions active lately, the sessions table comes first.
    several = False
    if target.follow_newest:
        from ctxtop.engine.live.sessions_table import active_sessions

        active = active_sessions(settings.active_minutes, args.agent, listed=target.listed)
        several = len(active) > 1
    return CtxtopApp(
        target.path,
        settings=settings,
        follow_newest=target.follow_newest,
        agent=target.agent,
        places=searched(target.agent),
        start_on_sessions=several,
        passed_over=list(target.skipped) if target.follow_newest else None,
        proxy_port=proxy_port,
    )


def _remove_on_hangup(folder: Path) -> None:
    """A closed terminal (SIGHUP) or a kill (SIGTERM) ends the demo at once, as it would
    without a handler, but removes its temp dir first."""

    def handler(signum: int, frame: object) -> None:
        shutil.rmtree(folder, ignore_errors=True)
        os._exit(128 + signum)

    for signum in (signal.SIGHUP, signal.SIGTERM):
        signal.signal(signum, handler)


def run_dashboard(args: argparse.Namespace) -> int:
    if args.demo:
        with tempfile.TemporaryDirectory(prefix="ctxtop-demo-") as folder:
            _remove_on_hangup(Path(folder))
            app = build_app(args, Path(folder))
            app.run()  # type: ignore[attr-defined]
        return 0
    proxy = start_proxy() if getattr(args, "proxy", False) else None
    try:
        app = build_app(args, proxy_port=proxy.port if proxy else None)
        app.run()  # type: ignore[attr-defined]
    finally:
        if proxy is not None:
            proxy.stop()
    return 0


def start_proxy() -> RunningProxy:
    """Live mode: the proxy on its own loop in a thread while the dashboard runs."""
    from ctxtop.engine.proxy.rewrite_live import LiveRewriter
    from ctxtop.engine.proxy.server import ProxyServer
    from ctxtop.engine.proxy.settings import load_proxy_settings

    settings = load_proxy_settings()
    for notice in settings.notices:  # before the dashboard takes the screen, as ctxtop proxy
        print(f"ctxtop: {one_line(notice)}", file=sys.stderr)
    try:
        # Live plans (Apply live, ctxtop edit --live) apply from the session's next request.
        return ProxyServer(settings, rewriter=LiveRewriter()).start_in_thread()
    except OSError as error:
        where = f"127.0.0.1:{settings.port}"
        raise CtxtopError(f"{where}: cannot listen ({error.strerror or error})") from None

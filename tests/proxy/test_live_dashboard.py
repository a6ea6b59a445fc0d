"""The dashboard's "Apply live", driven through the pilot on a session the real Claude Code wrote
(tests/proxy/data/live), whose request went through ctxtop's proxy (in-process, real HTTP on
127.0.0.1) to the project's model server: the panels offer "Apply live" once the session is
proxied, the header says "edited live" with what the agent holds and what the model receives,
the model server then receives the placeholders (or the summary), and ``l`` stops applying."""

from __future__ import annotations

import json
import re
import shutil
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from textual.widgets import Button

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tui"))

from dashboard_support import frozen_clock, synchronous, wait_until
from model_server import ModelServer

from ctxtop.engine.config import config_path
from ctxtop.engine.errors import InputError
from ctxtop.engine.live.auto_live import AutoArming, AutoLive, load_auto_live, parse_auto_live
from ctxtop.engine.proxy.live_plan import live_sessions, plan_path
from ctxtop.engine.proxy.rewrite_live import LiveRewriter
from ctxtop.engine.proxy.server import ProxyServer
from ctxtop.engine.proxy.settings import ProxySettings
from ctxtop.tui.app import CtxtopApp

DATA = Path(__file__).resolve().parent / "data" / "live" / "claude-code"
SESSION_LOG = next(DATA.glob("*-*-*.jsonl"))
SESSION = SESSION_LOG.stem
BODY = (DATA / "request.json").read_bytes()
PLACEHOLDER = "[ctxtop: old tool result cleared"


@contextmanager
def proxied() -> Iterator[tuple[ModelServer, int]]:
    """The model server and ctxtop's proxy (with the live rewriter) in front of it."""
    with ModelServer() as model:
        url = f"http://127.0.0.1:{model.port}"
        settings = ProxySettings(port=0).with_upstreams(anthropic=url)
        running = ProxyServer(settings, rewriter=LiveRewriter()).start_in_thread()
        try:
            yield model, running.port
        finally:
            running.stop()


def send(port: int) -> None:
    """The session's request through the proxy (as Claude Code sends it); what the model
    server received, as JSON text."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/messages",
        data=BODY,
        headers={"content-type": "application/json", "x-api-key": "dummy-key-for-the-test"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        answer.read()


def received(model: ModelServer) -> str:
    return json.dumps(model.requests[-1]["body"])


@synchronous
async def test_apply_live_from_the_editing_panel_then_stop(tmp_path: Path) -> None:
    session = tmp_path / SESSION_LOG.name
    shutil.copyfile(SESSION_LOG, session)
    with proxied() as (model, port):
        send(port)
        assert PLACEHOLDER not in received(model)  # measured, not rewritten: no plan
        app = CtxtopApp(session, clock=frozen_clock)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: app.live_session() == SESSION)
            assert "the model receives" in app.header.live
            await pilot.press("e")
            live = app.screen.query_one("#edit-live", Button)
            await wait_until(pilot, lambda: not live.disabled)
            await pilot.click("#edit-live")
            await wait_until(pilot, lambda: "edited live" in app.header.live)
            # ~ when counted with the session's tokenizer factor, ≈ a tokenizer estimate.
            assert re.search(r"the agent holds [\d,]+[~≈] tokens", app.header.live)
            assert live_sessions() == [SESSION]
            send(port)
            assert received(model).count(PLACEHOLDER) == 2  # the default: 3 tool uses kept
            await pilot.press("l")
            await wait_until(pilot, lambda: "edited live" not in app.header.live)
            assert not plan_path(SESSION).exists()
            send(port)
            assert PLACEHOLDER not in received(model)  # the agent's own request again


@synchronous
async def test_apply_live_from_the_compaction_panel(tmp_path: Path) -> None:
    session = tmp_path / SESSION_LOG.name
    shutil.copyfile(SESSION_LOG, session)
    with proxied() as (model, port):
        send(port)
        app = CtxtopApp(session, clock=frozen_clock)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: app.live_session() == SESSION)
            await pilot.press("c")
            live = app.screen.query_one("#compact-live", Button)
            await wait_until(pilot, lambda: not live.disabled)
            await pilot.click("#compact-live")
            await wait_until(pilot, lambda: "compacted live" in app.header.live)
            send(port)
            sent = model.requests[-1]["body"]["messages"]
            summary = sent[0]["content"][1]["text"]
            assert summary.startswith("This session continues an earlier conversation")


@synchronous
async def test_a_session_that_is_not_proxied_offers_no_apply_live(tmp_path: Path) -> None:
    session = tmp_path / SESSION_LOG.name
    shutil.copyfile(SESSION_LOG, session)
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.view is not None and app.view.analysis is not None)
        app.check_live()
        await wait_until(pilot, lambda: app.live is not None)  # looked: no measurement, no plan
        assert app.live is not None and not app.live.proxied
        await pilot.press("e")
        assert not app.screen.query("#edit-live")
        assert app.header.live == ""


@synchronous
async def test_the_automatic_policy_applies_an_edit_past_its_threshold(tmp_path: Path) -> None:
    """Settings ``live: {auto: edit, at: 0.01}``: the proxied session is past 1 % of its window,
    so the dashboard applies the default edit live by itself, once."""
    settings = config_path()
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text("live:\n  auto: edit\n  at: 0.01\n", encoding="utf-8")
    session = tmp_path / SESSION_LOG.name
    shutil.copyfile(SESSION_LOG, session)
    with proxied() as (model, port):
        send(port)
        app = CtxtopApp(session, clock=frozen_clock)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: "edited live" in app.header.live)
            assert app.auto_live == AutoLive("edit", 0.01)
            send(port)
            assert received(model).count(PLACEHOLDER) == 2
            # l stops it for good: still past 1 %, the next looks do not apply it again
            await pilot.press("l")
            await wait_until(pilot, lambda: "edited live" not in app.header.live)
            for _ in range(2):  # two more looks, each waited for
                app.live = None
                app.check_live()
                await wait_until(pilot, lambda: app.live is not None)
            assert app.live is not None and app.live.plan is None
            assert "edited live" not in app.header.live
            send(port)
            assert received(model).count(PLACEHOLDER) == 0


def test_the_automatic_policy_is_off_by_default_and_checked() -> None:
    assert load_auto_live() == AutoLive("off", 0.85)
    assert not AutoLive().due(0.99, proxied=True, planned=False)
    assert AutoLive("compact", 0.8).due(0.8, proxied=True, planned=False)
    assert not AutoLive("compact", 0.8).due(0.9, proxied=False, planned=False)
    assert not AutoLive("compact", 0.8).due(0.9, proxied=True, planned=True)
    assert parse_auto_live({"auto": False}, "f") == AutoLive()  # YAML's bare `off`
    for bad in ({"auto": "sometimes"}, {"at": 1.5}, {"at": True}, ["edit"]):
        with pytest.raises(InputError):
            parse_auto_live(bad, "config.yaml")


def test_the_automatic_policy_applies_once_and_again_only_after_the_fill_drops() -> None:
    arming = AutoArming(AutoLive("edit", 0.8))
    assert not arming.due("s", 0.79, proxied=True, planned=False)
    assert arming.due("s", 0.81, proxied=True, planned=False)
    assert not arming.due("s", 0.9, proxied=True, planned=True)  # in force
    assert not arming.due("s", 0.9, proxied=True, planned=False)  # stopped while past 80 %
    assert not arming.due("s", 0.5, proxied=True, planned=False)  # dropped: armed again
    assert arming.due("s", 0.85, proxied=True, planned=False)
    assert not arming.due("t", 0.95, proxied=False, planned=False)  # not through the proxy

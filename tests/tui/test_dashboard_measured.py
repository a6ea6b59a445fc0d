"""Live mode on the dashboard: a session whose requests went through ctxtop's proxy shows its
system prompt and tools as *measured* (``=``) from the proxy's figures, and ``m`` lists each
tool definition's cost and the cache breakpoints as sent; without them, inferred (``*``)."""

from __future__ import annotations

import re
from pathlib import Path

from dashboard_support import frozen_clock, synchronous, wait_until, write_lines
from textual.widgets import Static

from ctxtop.engine.live.session import LiveSession
from ctxtop.engine.proxy.composition import measure
from ctxtop.engine.proxy.store import append_measurement
from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.screens.measured import MeasuredScreen

REPORTED = 30_000  # the prompt size the API reported for the measured request


def proxied_request(session_id: str) -> None:
    """A measurement line for ``session_id`` as the proxy writes one: the composition of a
    Messages request with two tools and two breakpoints, and the answer's usage."""
    body = {
        "system": [{"type": "text", "text": "You are an agent. " * 300}],
        "tools": [
            {"name": "Bash", "input_schema": {"type": "object"}, "description": "run " * 400},
            {"name": "Read", "input_schema": {"type": "object"}, "description": "read " * 100},
        ],
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "hello " * 2000, "cache_control": {"type": "ephemeral"}},
            ]},
        ],
    }  # fmt: skip
    body["tools"][1]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    line = {
        "time": "2026-11-22T14:05:00.000+00:00",
        "protocol": "anthropic",
        "session_id": session_id,
        "status": 200,
        "model": "claude-sonnet-4-5",
        "usage": {"input_tokens": REPORTED, "cache_read_tokens": 0, "cache_write_tokens": 0},
        **measure("anthropic", body),
    }
    append_measurement(session_id, line)


def system_section(session: Path) -> tuple[int, str]:
    live = LiveSession(session)
    live.poll()
    view = live.view()
    assert view is not None and view.analysis is not None
    [system] = [s for s in view.analysis.sections if s.name == "system"]
    return system.tokens, system.provenance


def test_a_proxied_session_s_system_section_is_measured(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    write_lines(session, 40)
    inferred, provenance = system_section(session)
    assert provenance == "inferred"
    live = LiveSession(session)
    live.poll()
    view = live.view()
    assert view is not None and view.session_id
    proxied_request(view.session_id)
    measured, provenance = system_section(session)
    assert provenance == "measured"
    assert measured != inferred
    # System prompt and tools as shares of the reported 30k prompt: most of it here.
    assert REPORTED * 0.3 < measured < REPORTED


@synchronous
async def test_m_shows_each_tool_s_cost_and_the_breakpoints_as_sent(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    write_lines(session, 40)
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.view is not None and app.view.analysis is not None)
        await pilot.press("m")
        await wait_until(pilot, lambda: isinstance(app.screen, MeasuredScreen))
        text = str(app.screen.query_one(Static).render())
        assert "did not go through ctxtop's proxy" in text and "ANTHROPIC_BASE_URL" in text
        await pilot.press("escape")
        assert app.view is not None and app.view.session_id
        proxied_request(app.view.session_id)
        await pilot.press("p")  # a new analysis reads the measurement
        await wait_until(pilot, lambda: app.view is not None and app.view.measured is not None)
        sections = str(app.sections.render())
        assert re.search(r"\d[kM]?=", sections.split("\n")[0])  # system: measured
        await pilot.press("m")
        await wait_until(pilot, lambda: isinstance(app.screen, MeasuredScreen))
        text = str(app.screen.query_one(Static).render())
    lines = text.splitlines()
    bash = next(line for line in lines if line.strip().startswith("Bash"))
    read = next(line for line in lines if line.strip().startswith("Read"))
    assert lines.index(bash) < lines.index(read)  # the dearer tool first
    assert "tools[1]" in text and "ttl 1h" in text and "messages[0].content[0]" in text
    assert "30.0k prompt the API reported" in text


@synchronous
async def test_m_with_no_session_names_the_proxys_port() -> None:
    """It read "ANTHROPIC_BASE_URL=http://127.0.0.1:PORT claude": a newcomer had to guess."""
    app = CtxtopApp(None, clock=frozen_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("m")
        await wait_until(pilot, lambda: isinstance(app.screen, MeasuredScreen))
        text = str(app.screen.query_one(Static).render())
    assert "ANTHROPIC_BASE_URL=http://127.0.0.1:8787 claude" in text and "PORT" not in text

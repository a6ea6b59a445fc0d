"""A proxied session under a live plan: what the plan does, and what the model received on the
session's latest request (the proxy's measurement: the tokens of the bytes sent, and the API's
reported usage), beside what the agent holds (the plan's figures, made from the agent's log).
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from typing import Any

from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.files import open_regular
from ctxtop.engine.proxy.live_plan import LivePlan, load_plan, plan_path
from ctxtop.engine.proxy.settings import DEFAULT_PORT, load_proxy_settings
from ctxtop.engine.proxy.store import measurement_path
from ctxtop.engine.proxy.usage import reported_prompt
from ctxtop.engine.tokens.short import provenance_mark

TAIL_BYTES = 64 * 1024  # the session's latest measurement lines are in its file's last bytes


@dataclass(frozen=True, slots=True)
class Received:
    """The session's latest model request as the proxy measured it."""

    rewritten: bool  # the proxy sent the plan's body, not the agent's
    sent_tokens: int  # tokenizer count of the request sent (system, tools, messages)
    reported: int | None  # the whole prompt the API reported (cache reads and writes in it)
    time: str

    @classmethod
    def from_line(cls, line: dict[str, Any]) -> Received:
        return cls(
            rewritten=bool(line.get("rewritten")),
            sent_tokens=int(line.get("total_tokens") or 0),
            reported=reported_prompt(line.get("usage")),
            time=str(line.get("time") or ""),
        )


@dataclass(frozen=True, slots=True)
class LiveStatus:
    session_id: str
    plan: LivePlan | None
    received: Received | None  # None: the proxy has measured no request of the session
    problem: str | None = None  # why the session's plan file is not a plan (it is not applied)

    @property
    def proxied(self) -> bool:
        return self.received is not None

    def summary(self) -> str:
        """One line: ``edited live: the agent holds ~3,902 tokens, the model receives 3,019
        (reported)``; or what the proxy saw without a plan."""
        received = self.received
        model = "no request through the proxy yet"
        if received is not None:
            figure = received.reported if received.reported is not None else received.sent_tokens
            how = "reported" if received.reported is not None else "measured"
            model = f"the model receives {figure:,} ({how})"
        if self.problem is not None:
            return f"its plan cannot be read and is not applied; {model}"
        if self.plan is None:
            return f"proxied: {model}"
        held = self.plan.figures.get("tokens_before")
        # ~ calibrated with the session's tokenizer factor, ≈ a tokenizer estimate.
        mark = provenance_mark(str(self.plan.figures.get("tokens_source", "estimated")))
        agent = f"the agent holds {held:,}{mark} tokens" if isinstance(held, int) else "the agent"
        state = "edited live" if self.plan.kind == "edit" else "compacted live"
        return f"{state}: {agent}, {model}"


def last_measurement(session_id: str) -> dict[str, Any] | None:
    """The session's latest measurement line, read from the end of its file (the dashboard
    asks every few seconds; a long session's file is not read whole)."""
    try:
        with open(open_regular(measurement_path(session_id)), "rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(size - TAIL_BYTES, 0))
            tail = handle.read()
    except OSError:
        return None
    for raw in reversed(tail.split(b"\n")):
        try:
            line = json.loads(raw)
        except ValueError:
            continue  # a torn first line of the tail, or the empty last one
        if isinstance(line, dict):
            return line
    return None


def proxy_listening(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:``port`` (ctxtop's proxy, when it
    is the settings' port)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


def not_proxied_warning(session_id: str) -> str | None:
    """For a plan put in force: why nothing may apply it yet (no request of the session went
    through ctxtop's proxy, and maybe no proxy listens), or None when the proxy measured it."""
    if live_status(session_id).proxied:
        return None
    try:
        port = load_proxy_settings().port or DEFAULT_PORT
    except CtxtopError:
        port = DEFAULT_PORT
    where = f"http://127.0.0.1:{port}"
    start = (
        "the agent must be started through it"
        if proxy_listening(port)
        else f"nothing listens on {where}: start ctxtop proxy (or ctxtop --proxy), then the agent"
        " through it"
    )
    return (
        "no request of this session has gone through ctxtop's proxy, so nothing is applied"
        f" until one does; {start} (ANTHROPIC_BASE_URL={where} claude, OPENAI_BASE_URL="
        f"{where}/v1 codex)"
    )


def live_status(session_id: str) -> LiveStatus:
    """The session's plan and its latest measured request."""
    line = last_measurement(session_id)
    received = Received.from_line(line) if line is not None else None
    try:
        plan = load_plan(plan_path(session_id))  # every few seconds: no cache needed
    except CtxtopError as error:
        return LiveStatus(session_id, None, received, str(error))
    return LiveStatus(session_id, plan, received)

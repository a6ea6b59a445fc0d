"""A proxied session under a live plan: what the plan does, and what the model received on the
session's latest request (the proxy's measurement: the tokens of the bytes sent, and the API's
reported usage), beside what the agent holds (the plan's figures, made from the agent's log).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.proxy.live_plan import LivePlan, PlanCache
from engine.proxy.store import read_measurements

_PLANS = PlanCache()


@dataclass(frozen=True, slots=True)
class Received:
    """The session's latest model request as the proxy measured it."""

    rewritten: bool  # the proxy sent the plan's body, not the agent's
    sent_tokens: int  # tokenizer count of the request sent (system, tools, messages)
    reported: int | None  # the prompt the API reported (input + cache reads and writes)
    time: str

    @classmethod
    def from_line(cls, line: dict[str, Any]) -> Received:
        usage = line.get("usage") or {}
        parts = ("input_tokens", "cache_read_tokens", "cache_write_tokens")
        numbers = [int(usage[name]) for name in parts if isinstance(usage.get(name), int)]
        return cls(
            rewritten=bool(line.get("rewritten")),
            sent_tokens=int(line.get("total_tokens") or 0),
            reported=sum(numbers) if numbers else None,
            time=str(line.get("time") or ""),
        )


@dataclass(frozen=True, slots=True)
class LiveStatus:
    session_id: str
    plan: LivePlan | None
    received: Received | None  # None: the proxy has measured no request of the session

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
        if self.plan is None:
            return f"not edited live; {model}"
        held = self.plan.figures.get("tokens_before")
        agent = f"the agent holds ~{held:,} tokens" if isinstance(held, int) else "the agent"
        state = "edited live" if self.plan.kind == "edit" else "compacted live"
        return f"{state}: {agent}, {model}"


def live_status(session_id: str) -> LiveStatus:
    """The session's plan and its latest measured request (only the last line counts)."""
    lines = read_measurements(session_id)
    models = [line for line in lines if line.get("status") is not None]
    received = Received.from_line(models[-1]) if models else None
    return LiveStatus(session_id, _PLANS.get(session_id), received)

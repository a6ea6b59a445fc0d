"""The proxy's rewriter for live plans: ``LiveRewriter()(protocol, session_id, body)`` returns
the request the model receives under the session's plan, or None (no plan, nothing of the plan
in this request, a body that is not JSON): then the agent's bytes go upstream unchanged.

The same request under the same plan gives the same bytes every time (pure functions of the
body and the plan), so after the one request that writes the new prefix to the prompt cache,
the following requests read it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxtop.engine.proxy import rewrite_anthropic, rewrite_openai
from ctxtop.engine.proxy.live_plan import CompactCut, LivePlan, PlanCache
from ctxtop.engine.proxy.rewrite_common import decode, encode

Edit = Callable[[dict[str, Any], LivePlan], bool]
Compact = Callable[[dict[str, Any], CompactCut], bool]

# protocol (the proxy's names) -> how an edit and a compaction rewrite its body
PROTOCOLS: dict[str, tuple[Edit, Compact]] = {
    "anthropic": (rewrite_anthropic.edit, rewrite_anthropic.compact),
    "openai-responses": (rewrite_openai.edit_responses, rewrite_openai.compact_responses),
    "openai-chat": (rewrite_openai.edit_chat, rewrite_openai.compact_chat),
}


def mentions_plan(body: bytes, plan: LivePlan) -> bool:
    """Whether the body names the plan's first or last call: a cheap test before parsing it
    (one that holds neither is a side request or another conversation; a request that holds
    the plan's rounds holds both). Two searches, not one per call: a plan may name hundreds."""
    if plan.compact is not None:
        ids: tuple[str, ...] = plan.compact.summarised_calls or plan.compact.kept_calls
        if not ids:
            return True  # a plan of text rounds only: the parse decides, by their content
    else:
        ids = (*plan.results, *plan.inputs)
    return any(call.encode() in body for call in {*ids[:1], *ids[-1:]})


def rewrite_body(protocol: str, body: bytes, plan: LivePlan) -> bytes | None:
    """``body`` rewritten under ``plan`` for ``protocol``, or None if nothing changes."""
    handlers = PROTOCOLS.get(protocol)
    if handlers is None:
        return None
    if not mentions_plan(body, plan):
        return None  # a side request, another conversation: not parsed at all
    request = decode(body)
    if not isinstance(request, dict):
        return None
    edit, compact = handlers
    if plan.kind == "compact" and plan.compact is not None:
        changed = compact(request, plan.compact)
    else:
        changed = edit(request, plan)
    return encode(request) if changed else None


class LiveRewriter:
    """The rewriter to register with the proxy (``ProxyServer(rewriter=LiveRewriter())``):
    looks up the session's plan (one ``stat`` when it has not changed) and applies it."""

    def __init__(self) -> None:
        self.plans = PlanCache()

    def active(self, session_id: str) -> bool:
        """Whether a plan may be in force for the session (the proxy skips the rewrite if not).
        A ``stat`` at most: a changed plan is read in the rewrite's worker thread."""
        return self.plans.may_apply(session_id)

    def __call__(self, protocol: str, session_id: str | None, body: bytes) -> bytes | None:
        if not session_id:
            return None
        plan = self.plans.get(session_id)
        if plan is None:
            return None
        return rewrite_body(protocol, body, plan)

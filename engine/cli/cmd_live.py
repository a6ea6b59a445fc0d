"""``ctxtop live``: the sessions ctxtop edits or compacts live through its proxy (``ctxtop edit
--live``, ``ctxtop compact --live``, the dashboard's "Apply live"), with what the agent holds and
what the model receives; ``--stop ID`` stops applying (the next request is the agent's own)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ctxtop.engine.editing.preview import pays_off_after
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.live.live_status import live_status, not_proxied_warning
from ctxtop.engine.proxy.live_plan import LivePlan, live_sessions, stop_plan
from ctxtop.engine.safety.terminal import one_line


def plan_line(plan: LivePlan) -> str:
    """What a plan does, in a few words."""
    if plan.kind == "edit":
        count = len(plan.results)
        what = f"{count} old tool result{'s' if count != 1 else ''} cleared"
    else:
        rounds = plan.compact.summarised_rounds if plan.compact else 0
        what = f"{rounds} round{'s' if rounds != 1 else ''} summarised"
    figures = plan.figures
    before, after = figures.get("tokens_before"), figures.get("tokens_after")
    how = "calibrated" if figures.get("tokens_source") == "calibrated" else "estimate"
    size = f" ({before:,} -> {after:,} tokens, {how})" if isinstance(before, int) else ""
    return f"{plan.kind}: {what}{size}, since {one_line(plan.created)}"


def applied_lines(plan: LivePlan, path: str) -> list[str]:
    """What ``edit --live`` / ``compact --live`` print after putting a plan in force."""
    warning = not_proxied_warning(plan.session_id)
    done = "applied live to" if warning is None else "planned live (not applied yet) for"
    lines = [f"{done} session {plan.session_id}: {plan_line(plan)}"]
    if warning is not None:
        lines.append(f"warning: {warning}")
    figures = plan.figures
    if figures.get("break_even_requests") is not None:
        lines.append(
            f"cache rewrite: {figures['cache_rewrite_tokens']} tokens"
            f" ({'calibrated' if figures.get('tokens_source') == 'calibrated' else 'estimate'})"
            " on the next "
            f"request (${figures['cache_rewrite_cost_usd']:.4f}, {figures['priced_by']}); "
            + pays_off_after(figures["break_even_requests"])
        )
    lines.append(f"plan: {path}")
    lines.append(
        "the proxy (ctxtop proxy, or the dashboard's --proxy) rewrites the session's requests "
        "from the next one on; the agent's log keeps the originals"
    )
    lines.append(f"stop with: ctxtop live --stop {plan.session_id}")
    return lines


def run(args: argparse.Namespace) -> int:
    if args.stop:
        if not stop_plan(args.stop):
            raise CtxtopError(f"session {args.stop} is not edited live (ctxtop live lists them)")
        print(f"stopped: the next request of {args.stop} is the agent's own again")
        return 0
    statuses = [live_status(session) for session in live_sessions()]
    if args.json:
        rows: list[dict[str, Any]] = [
            {
                "session_id": s.session_id,
                "plan": s.plan.as_json() if s.plan else None,
                "received": None if s.received is None else vars_of(s.received),
                "summary": s.summary(),
                "problem": s.problem,
            }
            for s in statuses
        ]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
    else:
        if not statuses:
            print("no session is edited live (ctxtop edit --live, ctxtop compact --live)")
        for status in statuses:
            print(one_line(status.session_id))
            if status.plan is not None:
                print(f"  {plan_line(status.plan)}")
            print(f"  {status.summary()}")
    problems = [status.problem for status in statuses if status.problem]
    for problem in problems:  # the proxy does not apply these either
        print(f"ctxtop: {one_line(problem)}; not applied", file=sys.stderr)
    return 2 if problems else 0


def vars_of(value: Any) -> dict[str, Any]:
    return {name: getattr(value, name) for name in value.__slots__}


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "live", help="sessions edited or compacted live through the proxy", description=__doc__
    )
    parser.add_argument("--stop", metavar="SESSION_ID", help="stop applying to this session")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)

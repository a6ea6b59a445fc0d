"""Making a live plan: the decisions ``ctxtop edit`` and ``ctxtop compact`` make on the session's
log (engine/forks, run as a dry run: no fork is written), kept as a ``LivePlan`` the proxy
applies to the session's requests. Nothing is decided here."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.agents.session_reader import read_session
from engine.compaction.handoff import handoff_message
from engine.editing.policy import Policy
from engine.errors import CtxtopError
from engine.forks.compact import compact_session
from engine.forks.edit import edit_session
from engine.forks.transaction import Preview, unwritten
from engine.proxy.live_plan import CompactCut, LivePlan, save_plan

FIGURES = (
    "tokens_before",
    "tokens_after",
    "tokens_source",  # calibrated (the session's tokenizer factor) or estimated
    "cache_rewrite_tokens",
    "cache_rewrite_cost_usd",
    "saving_per_request_usd",
    "break_even_requests",
    "priced_by",
)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _figures(outcome: dict[str, Any]) -> dict[str, Any]:
    return {name: outcome.get(name) for name in FIGURES}


def edit_plan(
    path: str | Path, policy: Policy, session_id: str, **options: Any
) -> tuple[LivePlan, dict[str, Any]]:
    """The edit ``ctxtop edit --dry-run`` previews, as a live plan, and that preview.
    ``options``: ``edit_session``'s (``relevance``, ``upto``, ``shown``)."""
    if policy.offload:
        raise CtxtopError("--offload writes files for a fork; a live edit cannot offload")
    replaced: dict[str, Any] = {}

    def keep(results: dict[str, str], inputs: dict[str, Any]) -> None:
        replaced.update(results=results, inputs=inputs)

    outcome = edit_session(path, policy, dry_run=True, on_plan=keep, **options).as_json()
    plan = _plan(
        "edit",
        session_id,
        outcome,
        results=dict(replaced.get("results") or {}),
        inputs=dict(replaced.get("inputs") or {}),
    )
    return plan, outcome


def _plan(kind: str, session_id: str, outcome: dict[str, Any], **decisions: Any) -> LivePlan:
    """A plan of ``kind`` for the session a dry run's ``outcome`` previewed, holding
    ``decisions`` (an edit's replaced results and inputs, or a compaction's cut)."""
    return LivePlan(
        kind=kind,
        session_id=session_id,
        agent=outcome["agent"],
        source=outcome["source"],
        source_sha256=outcome["source_sha256"],
        created=_now(),
        figures=_figures(outcome),
        **decisions,
    )


def compact_cut(outcome: dict[str, Any]) -> CompactCut:
    """The rounds a compaction's outcome summarises and keeps, by their call ids."""
    rows = outcome["round_table"]
    summarised = [row for row in rows if not row["kept"]]
    with_calls = [i for i, row in enumerate(summarised) if row["call_ids"]]
    trailing = len(summarised) - (with_calls[-1] + 1) if with_calls else len(summarised)
    message = handoff_message(
        outcome["summary"], int(outcome["kept_rounds"]), bool(outcome["kept_request"])
    )
    return CompactCut(
        message=message,
        summarised_rounds=len(summarised),
        summarised_calls=tuple(c for row in summarised for c in row["call_ids"]),
        kept_calls=tuple(c for row in rows if row["kept"] for c in row["call_ids"]),
        trailing_rounds=trailing,
        kept_request=bool(outcome["kept_request"]),
    )


def compact_plan(
    path: str | Path, session_id: str, preview: Preview | None = None, **options: Any
) -> tuple[LivePlan, dict[str, Any]]:
    """The compaction ``ctxtop compact --dry-run`` previews, as a live plan, and that preview.
    ``preview``: one already made (the dashboard's, whose summary is the one applied); else
    made with ``options``, ``compact_session``'s (``summarizer``, ``keep_rounds`` ...)."""
    if preview is not None:
        outcome = unwritten(preview, dry_run=True).as_json()
    else:
        outcome = compact_session(path, dry_run=True, **options).as_json()
    if outcome["nothing_to_compact"] is not None:
        raise CtxtopError(f"{path}: {outcome['nothing_to_compact']}")
    return _plan("compact", session_id, outcome, compact=compact_cut(outcome)), outcome


def session_id_of(path: str | Path) -> str:
    """The id the agent sends with its requests: the session id its log records (Claude Code's
    file name, Codex's ``session_meta``), else the file's name."""
    found = read_session(path).session_id
    return found if found else Path(path).stem


def apply_edit(
    path: str | Path, policy: Policy, session_id: str | None = None, **options: Any
) -> tuple[LivePlan, dict[str, Any], Path]:
    """Plan the edit and put it in force (the proxy applies it from the session's next
    request); the plan, the edit's preview and the plan's file."""
    plan, outcome = edit_plan(path, policy, session_id or session_id_of(path), **options)
    if not plan.results and not plan.inputs:
        raise CtxtopError(f"{path}: nothing to clear, so nothing to apply live")
    return plan, outcome, save_plan(plan)


def apply_compact(
    path: str | Path,
    session_id: str | None = None,
    preview: Preview | None = None,
    **options: Any,
) -> tuple[LivePlan, dict[str, Any], Path]:
    """Plan the compaction (or take ``preview``'s) and put it in force; the plan, its preview
    and the plan's file."""
    plan, outcome = compact_plan(path, session_id or session_id_of(path), preview, **options)
    return plan, outcome, save_plan(plan)

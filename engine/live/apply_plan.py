"""Making a live plan: the decisions ``ctxtop edit`` and ``ctxtop compact`` make on the session's
log (engine/forks, run as a dry run: no fork is written), kept as a ``LivePlan`` the proxy
applies to the session's requests. Nothing is decided here."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxtop.engine.agents.session_reader import read_session
from ctxtop.engine.compaction.handoff import handoff_message
from ctxtop.engine.compaction.items import Round
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.forks.compact import CompactDetails, compact_session, preview_compact
from ctxtop.engine.forks.edit import EditDetails, edit_session, preview_edit
from ctxtop.engine.forks.transaction import (
    COMPACTING,
    EDITING,
    Details,
    Loaded,
    Outcome,
    Preview,
    load,
    unwritten,
)
from ctxtop.engine.proxy.live_plan import (
    FIGURE_KINDS,
    CompactCut,
    LivePlan,
    round_digest,
    save_plan,
)

FIGURES = tuple(FIGURE_KINDS)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _figures(outcome: Outcome[Details]) -> dict[str, Any]:
    """The figures the plan file keeps, as ``--json`` names them."""
    shown = outcome.as_json()
    return {name: shown.get(name) for name in FIGURES}


def edit_plan(
    path: str | Path,
    policy: Policy,
    session_id: str,
    loaded: Loaded | None = None,
    **options: Any,
) -> tuple[LivePlan, Outcome[EditDetails]]:
    """The edit ``ctxtop edit --dry-run`` previews, as a live plan, and that preview.
    ``loaded``: the session as the caller read it (the dashboard's panel), not read again;
    ``options``: ``edit_session``'s (``relevance``, ``upto``, ``shown``)."""
    if policy.offload:
        raise CtxtopError("--offload writes files for a fork; a live edit cannot offload")
    replaced: dict[str, Any] = {}

    def keep(results: dict[str, str], inputs: dict[str, Any]) -> None:
        replaced.update(results=results, inputs=inputs)

    if loaded is not None:
        options.pop("upto", None)  # the bytes ``loaded`` holds
        preview = preview_edit(loaded, policy, on_plan=keep, **options)
        outcome = unwritten(preview, dry_run=True)
    else:
        outcome = edit_session(path, policy, dry_run=True, on_plan=keep, **options)
    plan = _plan(
        "edit",
        session_id,
        outcome,
        results=dict(replaced.get("results") or {}),
        inputs=dict(replaced.get("inputs") or {}),
    )
    return plan, outcome


def _plan(kind: str, session_id: str, outcome: Outcome[Details], **decisions: Any) -> LivePlan:
    """A plan of ``kind`` for the session a dry run's ``outcome`` previewed, holding
    ``decisions`` (an edit's replaced results and inputs, or a compaction's cut)."""
    return LivePlan(
        kind=kind,
        session_id=session_id,
        agent=outcome.preview.agent,
        source=str(outcome.preview.loaded.path),
        source_sha256=outcome.preview.loaded.sha256,
        created=_now(),
        figures=_figures(outcome),
        **decisions,
    )


def round_digests(rounds: list[Round]) -> tuple[str, ...]:
    """Each round's ``round_digest``: the model's text and call ids, as the log holds them."""
    return tuple(
        round_digest(
            [item.text for item in round_.items if item.role == "assistant"],
            [call.call_id for call in round_.calls],
        )
        for round_ in rounds
    )


def _call_ids(rounds: list[Round]) -> tuple[str, ...]:
    return tuple(call.call_id for round_ in rounds for call in round_.calls)


def compact_cut(details: CompactDetails) -> CompactCut:
    """The rounds a compaction summarises (by their content) and keeps (by their call ids)."""
    cut = details.cut
    kept_request = cut.kept_request is not None
    return CompactCut(
        message=handoff_message(details.summary, len(cut.kept_rounds), kept_request),
        summarised_digests=round_digests(cut.summarised_rounds),
        summarised_calls=_call_ids(cut.summarised_rounds),
        kept_calls=_call_ids(cut.kept_rounds),
        kept_request=kept_request,
    )


def compact_plan(
    path: str | Path,
    session_id: str,
    preview: Preview[CompactDetails] | None = None,
    **options: Any,
) -> tuple[LivePlan, Outcome[CompactDetails]]:
    """The compaction ``ctxtop compact --dry-run`` previews, as a live plan, and that preview.
    ``preview``: one already made (the dashboard's, whose summary is the one applied); else
    made with ``options``, ``compact_session``'s (``summarizer``, ``keep_rounds`` ...)."""
    if preview is not None:
        done = unwritten(preview, dry_run=True)
    else:
        done = compact_session(path, dry_run=True, **options)
    details = done.preview.details
    if details.refused is not None:
        raise CtxtopError(f"{path}: {details.refused}")
    return _plan("compact", session_id, done, compact=compact_cut(details)), done


def session_id_of(path: str | Path) -> str:
    """The id the agent sends with its requests: the session id its log records (Claude Code's
    file name, Codex's ``session_meta``), else the file's name."""
    found = read_session(path).session_id
    return found if found else Path(path).stem


def loaded_session_id(loaded: Loaded) -> str:
    """``session_id_of`` the session as ``loaded`` read it (not read again)."""
    if loaded.state is None:  # a Codex log compacted without being read
        return session_id_of(loaded.path)
    return loaded.state.session_id or loaded.path.stem


def apply_edit(
    path: str | Path,
    policy: Policy,
    session_id: str | None = None,
    loaded: Loaded | None = None,
    **options: Any,
) -> tuple[LivePlan, Outcome[EditDetails], Path]:
    """Plan the edit and put it in force (the proxy applies it from the session's next
    request); the plan, the edit's preview and the plan's file. ``loaded``: as ``edit_plan``'s."""
    if session_id is None:
        loaded = loaded or load(Path(path), EDITING, options.pop("upto", None))
        session_id = loaded_session_id(loaded)
    plan, outcome = edit_plan(path, policy, session_id, loaded, **options)
    if not plan.results and not plan.inputs:
        raise CtxtopError(f"{path}: nothing to clear, so nothing to apply live")
    return plan, outcome, save_plan(plan)


def apply_compact(
    path: str | Path,
    session_id: str | None = None,
    preview: Preview[CompactDetails] | None = None,
    **options: Any,
) -> tuple[LivePlan, Outcome[CompactDetails], Path]:
    """Plan the compaction (or take ``preview``'s) and put it in force; the plan, its preview
    and the plan's file."""
    if session_id is None:
        if preview is None:
            preview = preview_compact(
                load(Path(path), COMPACTING, options.pop("upto", None)), **options
            )
        session_id = loaded_session_id(preview.loaded)
    plan, outcome = compact_plan(path, session_id, preview, **options)
    return plan, outcome, save_plan(plan)

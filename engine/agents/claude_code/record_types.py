"""Which Claude Code record types the reader reads, which it knows and leaves out, and so which
ones it does not know (``note``: counted on the session, shown as "figures may be incomplete").

The known types are those of ../shared/docs/agent-log-formats.md §1.3 (the write-policy table of
cc2.1.112 and the strings of cc2.1.330) and those Claude Code 2.1.332 wrote in the realagents
runs; the ``system`` subtypes are the set the 2.1.332 binary lists for its transcript lines.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.sessions.model import SessionState

# Read: the conversation, titles, queued prompts (process starts) and recorded requests.
READ = frozenset(
    {
        "user",
        "assistant",
        "attachment",
        "system",
        "progress",
        "summary",
        "custom-title",
        "ai-title",
        "queue-operation",
        "api-request",
    }
)
# Known, and nothing the report shows is in them: session metadata, file backups, UI state,
# the CLI's own bookkeeping (``cost-state``: its running usage, the responses' own usage is read),
# and the blobs and shapes of recorded requests.
IGNORED = frozenset(
    {
        "agent-color",
        "agent-name",
        "agent-setting",
        "api-request-blob",
        "api-request-resumed",
        "api-request-shape",
        "artifact-autoreact-ledger",
        "artifact-comment-monitor",
        "atis-latch",
        "attribution-snapshot",
        "bridge-session",
        "content-replacement",
        "continued-in",
        "cost-state",
        "data-flow-incomplete",
        "data-flow-records",
        "derived-from",
        "dev-mods",
        "ended-by-model",
        "file-history-delta",
        "file-history-snapshot",
        "fork-context-ref",
        "frame-link",
        "history-suppression",
        "isolation-latch",
        "last-prompt",
        "marble-origami-commit",
        "marble-origami-snapshot",
        "memory-mode",
        "mode",
        "observer-ref",
        "permission-mode",
        "pr-link",
        "relocated",
        "resume-head-vouch",
        "session-owner",
        "speculation-accept",
        "tag",
        "tools-used",
        "worktree-state",
    }
)
# ``system`` lines: compact and microcompact boundaries are read; the others are not sent to
# the model (§1.3).
SYSTEM_READ = frozenset({"compact_boundary", "microcompact_boundary"})
SYSTEM_IGNORED = frozenset(
    {
        "agents_killed",
        "api_error",
        "away_summary",
        "bridge_status",
        "file_snapshot",
        "informational",
        "local_command",
        "memory_saved",
        "model_consent_fallback",
        "model_fallback",
        "model_refusal_fallback",
        "model_refusal_no_fallback",
        "permission_retry",
        "read_divider",
        "scheduled_task_fire",
        "stop_hook_summary",
        "thinking",
        "turn_duration",
    }
)


def note(state: SessionState, record: Mapping[str, Any]) -> None:
    """Count ``record`` on ``state`` when the reader leaves it out: as ignored when its type is
    known, else as unknown (a ``system`` line by its subtype, ``system:<subtype>``)."""
    kind = record.get("type")
    if kind == "system":
        note_system(state, record.get("subtype"))
    elif kind in IGNORED:
        state.ignore_type(kind)
    elif kind not in READ:
        state.unknown_type(kind)


def note_system(state: SessionState, subtype: Any) -> None:
    if subtype in SYSTEM_READ:
        return
    if subtype is None:  # 1.0.x: an informational line without a subtype
        state.ignore_type("system")
    elif subtype in SYSTEM_IGNORED:
        state.ignore_type(f"system:{subtype}")
    else:
        state.unknown_type(f"system:{subtype}" if isinstance(subtype, str) else "system:?")

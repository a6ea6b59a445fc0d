"""Which Claude Code record types the reader reads, which it knows and leaves out, and so which
ones it does not know (``note``: counted on the session, shown as "figures may be incomplete").

The known types are those of ../shared/docs/agent-log-formats.md §1.3 (the write-policy table of
cc2.1.112 and the strings of cc2.1.330) and those Claude Code 2.1.332 wrote in the realagents
runs; the ``system`` subtypes are the set the 2.1.332 binary lists for its transcript lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxtop.engine.sessions.model import SessionState

if TYPE_CHECKING:
    from ctxtop.engine.agents.claude_code.entries import Entry

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

# ``attachment`` types (``attachment.type``): what Claude Code 2.1.332 turns into messages for
# the model (its attachment-to-message table and switch, and the types it tests for before
# them), what its logs and the public ones hold, and §1.3's list. Every attachment is counted
# in the context; one of another type is also shown as not understood (``attachment:<type>``):
# what it carries may be read wrongly.
ATTACHMENTS = frozenset(
    {
        "account_memory_recall",
        "advisor_stripped",
        "advisor_tool",
        "agent_ask_notice",
        "agent_listing_delta",
        "agent_mention",
        "already_read_file",
        "artifact_opening_prefetch",
        "async_hook_response",
        "async_hook_response_batch",
        "at_mention_reference",
        "attention_budget",
        "auto_mode",
        "auto_mode_exit",
        "bash_output_audience_note",
        "batching_reminder",
        "batching_reminder_sent",
        "budget_usd",
        "claude_app_notice",
        "command_permissions",
        "compact_file_reference",
        "context_efficiency",
        "context_sections",
        "coordinator_context",
        "cowork_memory_context",
        "credential_org",
        "critical_system_reminder",
        "date",
        "date_change",
        "deferred_tools_delta",
        "deferred_tools_record",
        "diagnostics",
        "dir_sync_notice",
        "directory",
        "dynamic_skill",
        "edited_image_file",
        "edited_text_file",
        "elapsed_time_reminder",
        "environment",
        "file",
        "first_week",
        "fork_briefing",
        "goal_status",
        "goals",
        "hook_additional_context",
        "hook_blocking_error",
        "hook_cancelled",
        "hook_deferred_tool",
        "hook_error_during_execution",
        "hook_non_blocking_error",
        "hook_permission_decision",
        "hook_stopped_continuation",
        "hook_success",
        "hook_system_message",
        "inlined_image_paths",
        "instructions",
        "invoked_skills",
        "language",
        "linked_plugin_tools_note",
        "max_turns_reached",
        "mcp_dropped_tools_delta",
        "mcp_instructions_delta",
        "mcp_resource",
        "memory_update",
        "message_pdf_reads",
        "model",
        "nested_memory",
        "opened_file_in_ide",
        "output_limit_note",
        "output_style",
        "output_style_instructions",
        "output_token_usage",
        "pdf_reference",
        "peer_mention",
        "plan_file_reference",
        "plan_mode",
        "plan_mode_exit",
        "plan_mode_reentry",
        "plugin_note",
        "poll_events",
        "prefix_delta",
        "proactivity",
        "progress_reminder_sent",
        "project_doc_reads",
        "projects_thread_ask",
        "prompt_as_file",
        "prompt_render_point",
        "prompt_snapshot",
        "queued_command",
        "read_truncation_notice",
        "relevant_memories",
        "remote_session_change",
        "repl_mcp_needs_auth",
        "repl_mcp_servers",
        "sandbox_instructions",
        "secondary_reminder",
        "secondary_reminder_sent",
        "selected_lines_in_diff",
        "selected_lines_in_ide",
        "session_context",
        "session_cron_carry",
        "silent_turn_reminder",
        "skill_listing",
        "skill_mention",
        "structured_output",
        "task_reminder",
        "task_status",
        "team_context",
        "teammate_mailbox",
        "teammate_shutdown_batch",
        "thinking_drop",
        "thinking_stripped",
        "thread_state",
        "todo_reminder",
        "token_usage",
        "tool_host_result_lines",
        "tool_hosts_correction",
        "tool_hosts_notice",
        "tool_offer_record",
        "tool_results_cut",
        "tool_search_usage_reminder",
        "total_tokens_reminder",
        "ultra_effort_enter",
        "ultra_effort_exit",
        "ultrathink_effort",
        "unknown_command_fallback",
        "whole_texts_withdrawn",
        "widget_context_hint",
        "withheld_memory",
        "workflow_keyword_request",
        "workflow_size_guideline_change",
    }
)


def note(state: SessionState, line: Entry) -> None:
    """Count ``line`` on ``state`` when the reader leaves it out: as ignored when its type is
    known, else as unknown (a ``system`` line by its subtype, ``system:<subtype>``)."""
    kind = line.type
    if kind == "system":
        note_system(state, line.subtype)
    elif kind == "attachment":
        note_attachment(state, line.attachment)
    elif kind in IGNORED:
        state.ignore_type(kind)
    elif kind not in READ:
        state.unknown_type(kind)


def note_attachment(state: SessionState, attachment: Any) -> None:
    """An attachment is read (counted in the context) whatever its type; one of a type ctxtop
    does not know is also noted as not understood."""
    kind = attachment.get("type") if isinstance(attachment, dict) else None
    if kind not in ATTACHMENTS:
        state.unknown_type(f"attachment:{kind}" if isinstance(kind, str) else "attachment:?")


def note_system(state: SessionState, subtype: Any) -> None:
    if subtype in SYSTEM_READ:
        return
    if subtype is None:  # 1.0.x: an informational line without a subtype
        state.ignore_type("system")
    elif subtype in SYSTEM_IGNORED:
        state.ignore_type(f"system:{subtype}")
    else:
        state.unknown_type(f"system:{subtype}" if isinstance(subtype, str) else "system:?")

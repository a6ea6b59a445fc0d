"""``ctxtop report --json``: a ``Sample`` (engine/sessions/sample.py) as a JSON-ready dict, the
one serializer of the figures; the keys and values are the ones the golden reports hold."""

from __future__ import annotations

from typing import Any

from ctxtop.engine.models.window import unknown_window_note
from ctxtop.engine.sessions.adapter import Adapter
from ctxtop.engine.sessions.ledger import ToolTotal
from ctxtop.engine.sessions.model import Compaction, Microcompaction, Usage
from ctxtop.engine.sessions.sample import (
    Breakdown,
    LastRequest,
    Sample,
    SubagentSample,
    build_sample,
)


def build_report(adapter: Adapter, *, breakdown: bool = False) -> dict[str, Any]:
    """The report of one session as ``ctxtop report --json`` prints it."""
    return to_json(build_sample(adapter, breakdown=breakdown))


def _usage(usage: Usage) -> dict[str, int]:
    return {
        "input_tokens_total": usage.input_tokens_total,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
    }


def _totals(usage: Usage) -> dict[str, int]:
    return {
        "input": usage.input_tokens,
        "output": usage.output_tokens,
        "cache_read": usage.cache_read_tokens,
        "cache_write": usage.cache_write_tokens,
    }


def _subagent_json(sub: SubagentSample) -> dict[str, Any]:
    return {
        "id": sub.id,
        "description": sub.description,
        "parent_tool_call_id": sub.parent_tool_call_id,
        "model": sub.model,
        "file": sub.file,
        "api_requests": sub.api_requests,
        "last_input_tokens_total": sub.last_prompt,
        "totals": _totals(sub.totals),
        "context_tokens": {"value": sub.context.value, "source": sub.context.source},
    }


def _compaction_json(item: Compaction) -> dict[str, Any]:
    return {
        "trigger": item.trigger,
        "pre_tokens": item.pre_tokens,
        "post_tokens": item.post_tokens,
        "post_tokens_source": None if item.post_tokens is None else item.post_source,
        "after_tokens": item.after_tokens,
        "line": item.line,
        "timestamp": item.timestamp,
    }


def _microcompaction_json(item: Microcompaction) -> dict[str, Any]:
    return {
        "kind": "microcompaction",
        "trigger": item.trigger,
        "pre_tokens": item.pre_tokens,
        "tokens_saved": item.tokens_saved,
        "cleared_tool_results": item.cleared_results,
        "cleared_attachments": item.cleared_attachments,
        "line": item.line,
        "timestamp": item.timestamp,
    }


def _tool_json(tool: ToolTotal) -> dict[str, Any]:
    row: dict[str, Any] = {
        "name": tool.name,
        "calls": tool.calls,
        "result_tokens": tool.result_tokens,
        "persisted_outputs": tool.persisted_outputs,
    }
    if tool.estimated:  # part of the figure estimated from result sizes (engine/sessions/ledger.py)
        row["result_tokens_estimated"] = True
    return row


def _breakdown_json(breakdown: Breakdown) -> dict[str, Any]:
    return {
        "categories": [
            {"category": entry.name, "tokens": entry.tokens, "blocks": entry.blocks}
            for entry in breakdown.categories
        ],
        "estimated_total": breakdown.estimated_total,
        "unattributed": breakdown.outside_log,
        "encoding": breakdown.encoding,
        "logged_prompt": breakdown.logged_prompt,
        "tokenizer_factor": breakdown.factor,
    }


def _parts_json(sample: Sample) -> dict[str, Any]:
    """The lists of the report: compactions (and microcompactions), truncations, tools,
    sub-agents, skipped lines."""
    parent = sample.subagent_of
    return {
        "compactions": [_compaction_json(item) for item in sample.compactions],
        # Only when there is one (the sessions of most agents never have any).
        **(
            {"microcompactions": [_microcompaction_json(m) for m in sample.microcompactions]}
            if sample.microcompactions
            else {}
        ),
        "truncations": [
            {
                "pre_tokens": item.pre_tokens,
                "post_tokens": item.post_tokens,
                "messages_removed": item.messages_removed,
                "token_limit": item.token_limit,
                "line": item.line,
                "timestamp": item.timestamp,
            }
            for item in sample.truncations
        ],
        "tools": [_tool_json(tool) for tool in sample.tools],
        "subagents": [_subagent_json(sub) for sub in sample.subagents],
        "subagent_of": None
        if parent is None
        else {
            "id": parent.id,
            "description": parent.description,
            "parent_session_id": parent.session_id,
            "parent_file": parent.file,
            "parent_tool_call_id": parent.tool_call_id,
        },
        "skipped_lines": [
            {"file": skip.path, "line": skip.line, "reason": skip.reason} for skip in sample.skipped
        ],
        # Records left out by type: of types ctxtop does not know (figures may be incomplete),
        # and of types it knows carry nothing it shows.
        "record_types": {
            "unknown": dict(sample.record_types.unknown),
            "ignored": dict(sample.record_types.ignored),
        },
    }


def _agent_shares(last: LastRequest) -> dict[str, Any]:
    """The agent's own split of the prompt (only for a log that has one): each part's share as
    the agent counted it, and that share of the reported prompt in tokens."""
    split = last.agent_split
    if not split:
        return {}
    parts = [
        {
            "category": part.category,
            "label": part.label,
            "percent_of_prompt": part.percent,
            "tokens": part.tokens,
            "provenance": "inferred",  # the agent's share of the reported prompt
        }
        for part in split
    ]
    return {"agent_prompt_breakdown": parts}


def to_json(sample: Sample) -> dict[str, Any]:
    """The sample as the JSON-ready dict of ``ctxtop report --json`` (keys in its order)."""
    last, context = sample.last_request, sample.context
    report: dict[str, Any] = {
        "agent": sample.agent,
        "agent_version": sample.agent_version,
        "session_id": sample.session_id,
        "file": sample.file,
        "cwd": sample.cwd,
        "title": sample.title,
        "model": sample.model,
        "first_activity": sample.first_activity,
        "last_activity": sample.last_activity,
        "context_window": sample.window.tokens,
        "context_window_source": sample.window.source,
        "context_window_note": unknown_window_note(sample.window),
        "last_request": None
        if last is None
        else {
            **_usage(last.usage),
            "response_id": last.response_id,
            "line": last.line,
            "timestamp": last.timestamp,
            **_agent_shares(last),
        },
        "context_tokens": {
            "value": context.value,
            "source": context.source,
            "reported": context.reported,
            "estimated": context.estimated,
            "estimate_encoding": sample.encoding,
            # API tokens per tokenizer token the estimate was corrected with (1: none learnt).
            "tokenizer_factor": context.factor,
        },
        "fill_percent": sample.fill_percent,
        "autocompact_at": sample.autocompact_at,
        "api_requests": sample.api_requests,
        "totals": _totals(sample.totals),
    }
    report.update(_parts_json(sample))
    report["lines_read"] = sample.lines_read
    report["bytes_read"] = sample.bytes_read
    if sample.breakdown is not None:
        report["context_breakdown"] = _breakdown_json(sample.breakdown)
    return report

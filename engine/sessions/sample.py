"""``Sample``: the figures of a session at one moment, typed, built once per update.

One sample feeds everything that shows figures: the dashboard (engine/live), ``ctxtop report
--json`` (``to_json``, the one serializer), ``ctxtop sessions`` and ``ctxtop statusline``.
A sample copies what it shows out of the session model, so it stays as it was when the model
moves on (the dashboard keeps and replays samples).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from engine.sessions.adapter import Adapter
from engine.sessions.ledger import CategoryTotal, Ledger, ToolTotal
from engine.sessions.model import Compaction, SessionState, SkippedLine, Truncation, Usage
from engine.sessions.report import (
    ContextTokens,
    Window,
    context_tokens,
    context_window,
    encoding_for,
    fill_percent,
)


@dataclass(frozen=True, slots=True)
class LastRequest:
    usage: Usage
    response_id: str
    line: int
    timestamp: str | None


@dataclass(frozen=True, slots=True)
class Breakdown:
    """What the context holds by kind of content (tokenizer estimates); ``unattributed``: the
    part of the context figure the log does not show (system prompt, tools, framing)."""

    categories: tuple[CategoryTotal, ...]
    unattributed: int
    encoding: str

    @property
    def estimated_total(self) -> int:
        return sum(entry.tokens for entry in self.categories)


@dataclass(frozen=True, slots=True)
class SubagentSample:
    id: str | None
    description: str | None
    parent_tool_call_id: str | None
    model: str | None
    file: str
    api_requests: int
    last_prompt: int | None  # the whole prompt of its last request
    totals: Usage
    context: ContextTokens
    window: Window  # its model's (the parent's model when its log names none)

    @property
    def fill_percent(self) -> float | None:
        return fill_percent(self.context.value, self.window.tokens)


@dataclass(frozen=True, slots=True)
class Parent:
    """For a sub-agent's own file: what it is and the session (and tool call) that started it."""

    id: str
    description: str | None
    session_id: str | None
    file: str | None
    tool_call_id: str | None


@dataclass(frozen=True, slots=True)
class Sample:
    agent: str
    agent_version: str | None
    session_id: str | None
    file: str
    cwd: str | None
    title: str | None
    model: str | None
    first_activity: str | None
    last_activity: str | None
    window: Window
    last_request: LastRequest | None
    context: ContextTokens
    encoding: str
    autocompact_at: int | None
    api_requests: int
    totals: Usage
    compactions: tuple[Compaction, ...]  # "after" only when the window can hold it
    truncations: tuple[Truncation, ...]
    tools: tuple[ToolTotal, ...]
    subagents: tuple[SubagentSample, ...]
    subagent_of: Parent | None
    skipped: tuple[SkippedLine, ...]  # the sub-agents' too
    lines_read: int
    bytes_read: int
    history: tuple[int, ...]  # context tokens of each request of the main session, oldest first
    breakdown: Breakdown | None = None

    @property
    def fill_percent(self) -> float | None:
        return fill_percent(self.context.value, self.window.tokens)


def _compaction(compaction: Compaction, window: int | None) -> Compaction:
    """A copy; its "after" figure only when the window can hold it (an agent's own estimate can
    be absurd)."""
    post = compaction.post_tokens
    if post is not None and window and post > window:
        post = None
    return dataclasses.replace(compaction, post_tokens=post)


def _subagent(child: SessionState, ledger: Ledger, parent_model: str | None) -> SubagentSample:
    last = child.last_response
    return SubagentSample(
        id=child.subagent_id,
        description=child.description,
        parent_tool_call_id=child.parent_tool_call_id,
        model=child.model,
        file=str(child.path),
        api_requests=child.api_requests,
        last_prompt=last.usage.input_tokens_total if last else None,
        totals=dataclasses.replace(child.totals),
        context=context_tokens(child, ledger),
        window=context_window(child, parent_model),
    )


def _parent(state: SessionState) -> Parent | None:
    if state.subagent_id is None:
        return None
    return Parent(
        id=state.subagent_id,
        description=state.description,
        session_id=state.parent_session_id,
        file=None if state.parent_path is None else str(state.parent_path),
        tool_call_id=state.parent_tool_call_id,
    )


def _last_request(state: SessionState) -> LastRequest | None:
    last = state.last_response
    if last is None:
        return None
    return LastRequest(dataclasses.replace(last.usage), last.key, last.line, last.timestamp)


def build_sample(
    adapter: Adapter, ledger: Ledger | None = None, *, breakdown: bool = False
) -> Sample:
    """The figures of ``adapter``'s session now. ``ledger``: the counts kept between samples
    (None: a new one, nothing kept); ``breakdown``: also what the context holds by kind."""
    state = adapter.snapshot()
    ledger = ledger or Ledger()
    encoding = encoding_for(state)
    window = context_window(state)
    context = context_tokens(state, ledger, encoding)
    skipped = list(state.skipped)
    for child in state.subagents.values():
        skipped.extend(child.skipped)
    sample = Sample(
        agent=state.agent,
        agent_version=state.agent_version,
        session_id=state.session_id,
        file=str(state.path),
        cwd=state.cwd,
        title=state.title,
        model=state.model,
        first_activity=state.first_activity,
        last_activity=state.last_activity,
        window=window,
        last_request=_last_request(state),
        context=context,
        encoding=encoding.name,
        autocompact_at=adapter.autocompact_at(window.tokens) if window.tokens else None,
        api_requests=state.api_requests,
        totals=dataclasses.replace(state.totals),
        compactions=tuple(_compaction(item, window.tokens) for item in state.compactions),
        truncations=tuple(dataclasses.replace(item) for item in state.truncations),
        tools=ledger.tools(state, encoding),
        subagents=tuple(
            _subagent(child, ledger, state.model) for child in state.subagents.values()
        ),
        subagent_of=_parent(state),
        skipped=tuple(dataclasses.replace(item) for item in skipped),
        lines_read=state.lines_read,
        bytes_read=state.bytes_read,
        history=tuple(response.usage.total for response in state.responses.values()),
    )
    if not breakdown:
        return sample
    categories = ledger.categories(state, encoding)
    estimated = sum(entry.tokens for entry in categories)
    unattributed = max(context.value - estimated, 0) if context.source != "estimated" else 0
    return dataclasses.replace(sample, breakdown=Breakdown(categories, unattributed, encoding.name))


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
        "line": item.line,
        "timestamp": item.timestamp,
    }


def _breakdown_json(breakdown: Breakdown) -> dict[str, Any]:
    return {
        "categories": [
            {"category": entry.name, "tokens": entry.tokens, "blocks": entry.blocks}
            for entry in breakdown.categories
        ],
        "estimated_total": breakdown.estimated_total,
        "unattributed": breakdown.unattributed,
        "encoding": breakdown.encoding,
    }


def _parts_json(sample: Sample) -> dict[str, Any]:
    """The lists of the report: compactions, truncations, tools, sub-agents, skipped lines."""
    parent = sample.subagent_of
    return {
        "compactions": [_compaction_json(item) for item in sample.compactions],
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
        "tools": [
            {
                "name": tool.name,
                "calls": tool.calls,
                "result_tokens": tool.result_tokens,
                "persisted_outputs": tool.persisted_outputs,
            }
            for tool in sample.tools
        ],
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
    }


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
        "last_request": None
        if last is None
        else {
            **_usage(last.usage),
            "response_id": last.response_id,
            "line": last.line,
            "timestamp": last.timestamp,
        },
        "context_tokens": {
            "value": context.value,
            "source": context.source,
            "reported": context.reported,
            "estimated": context.estimated,
            "estimate_encoding": sample.encoding,
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

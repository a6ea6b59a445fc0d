"""State → the report: the figures ``ctxtop report --json`` prints and the dashboard shows.

Context tokens, by provenance:

- ``compaction``: a compaction happened after the last request and logged its ``postTokens``;
- ``reported``: the last request's whole prompt plus its output (what the agent itself counts,
  e.g. Claude Code's ``tokenCountWithEstimation``), nothing sent since;
- ``calibrated``: that reported figure plus a tokenizer estimate of what came after the last
  request (tool results, attachments, a new prompt not yet sent);
- ``estimated``: nothing reported applies (no request with usage in the log, or a compaction
  without ``postTokens`` and no request since): every message of the context counted with the
  tokenizer. The system prompt and tool definitions are not in the logs, so this is low.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from engine.models.registry import ModelInfo, Registry, default_registry
from engine.sessions.adapter import Adapter
from engine.sessions.model import Block, Compaction, Message, SessionState, Usage
from engine.tokens import get_encoding
from engine.tokens.cache import CachedCounter, default_disk_cache
from engine.tokens.encoding import Encoding

# Claude Code's own estimate for an image or document block (agent-log-formats.md §1.6).
IMAGE_TOKENS = 2000
DEFAULT_ENCODING = "o200k_base"
# From this many texts on, counts go through the on-disk cache; a live append's one or two
# texts are counted directly (a disk write per append would cost more than it saves).
BULK = 32


@dataclass(frozen=True, slots=True)
class ContextTokens:
    value: int
    source: str  # reported | calibrated | estimated | compaction
    reported: int | None  # the part the log reported (None for estimated/compaction)
    estimated: int  # the part estimated with the tokenizer


class _Infos:
    """Registry answers memoised for the registry that gave them."""

    registry: Registry | None = None
    infos: dict[str | None, ModelInfo] = {}  # noqa: RUF012 - one shared memo


def model_info(model: str | None) -> ModelInfo:
    """The registry's entry for ``model``, memoised (a live report looks it up several times)."""
    registry = default_registry()
    if _Infos.registry is not registry:
        _Infos.registry, _Infos.infos = registry, {}
    info = _Infos.infos.get(model)
    if info is None:
        info = _Infos.infos[model] = registry.lookup(model)
    return info


def encoding_for(state: SessionState) -> Encoding:
    name = model_info(state.model).encoding or DEFAULT_ENCODING
    try:
        return get_encoding(name)
    except Exception:
        return get_encoding(DEFAULT_ENCODING)


class Counter(Protocol):
    """Anything that counts texts: an ``Encoding`` or a ``CachedCounter``."""

    def count_batch(self, texts: Sequence[str]) -> list[int]: ...


_CACHED: dict[str, CachedCounter] = {}


def cached(encoding: Encoding) -> CachedCounter:
    """A counter for bulk counts (all tool results, the whole context) that remembers counts on
    disk, so re-opening a session does not tokenize its history again."""
    counter = _CACHED.get(encoding.name)
    if counter is None:
        counter = _CACHED[encoding.name] = CachedCounter(encoding, default_disk_cache())
    return counter


def count_blocks(blocks: Sequence[Block], encoding: Counter) -> int:
    """Tokenizer estimate of blocks, cached on each block (images: a flat estimate)."""
    pending = [block for block in blocks if block.tokens is None]
    texts: list[str] = []
    for block in pending:
        if block.kind == "image":
            block.tokens = IMAGE_TOKENS
        else:
            texts.append(block.content())
    if texts:
        counts = iter(encoding.count_batch(texts))
        for block in pending:
            if block.tokens is None:
                block.tokens = next(counts)
    return sum(block.tokens or 0 for block in blocks)


def estimate_messages(messages: Sequence[Message], encoding: Counter) -> int:
    """Tokenizer estimate of messages' content (no per-message framing: an estimate)."""
    return count_blocks([block for message in messages for block in message.blocks], encoding)


def messages_after_last_response(state: SessionState) -> list[Message] | None:
    """The context after the last response's own message (None if it is not on the context)."""
    last = state.last_response
    if last is None:
        return None
    context = state.context
    for index in range(len(context) - 1, -1, -1):
        if context[index].response_key == last.key:
            return context[index + 1 :]
    return None


def context_tokens(state: SessionState, encoding: Encoding | None = None) -> ContextTokens:
    compaction = state.pending_compaction
    if compaction is not None and compaction.post_tokens is not None:
        return ContextTokens(compaction.post_tokens, "compaction", None, 0)
    encoding = encoding or encoding_for(state)
    tail = messages_after_last_response(state)
    last = state.last_response
    if last is None or tail is None:
        estimate = estimate_messages(state.context, encoding)
        return ContextTokens(estimate, "estimated", None, estimate)
    reported = last.usage.input_tokens_total + last.usage.output_tokens
    estimate = estimate_messages(tail, encoding)
    source = "calibrated" if estimate else "reported"
    return ContextTokens(reported + estimate, source, reported, estimate)


BREAKDOWN_ORDER = (
    "instructions",
    "user",
    "assistant",
    "thinking",
    "tool_calls",
    "tool_results",
    "attachments",
    "compact_summary",
    "images",
    "other",
)


def _category(message: Message, block: Block) -> str:
    if block.kind == "image":
        return "images"
    if message.kind == "attachment":
        return "attachments"
    if message.kind == "compact_summary":
        return "compact_summary"
    if block.kind == "thinking":
        return "thinking"
    if block.kind == "tool_use":
        return "tool_calls"
    if block.kind == "tool_result":
        return "tool_results"
    if message.role in ("system", "developer") or message.kind == "instructions":
        return "instructions"
    if message.role in ("user", "assistant"):
        return message.role
    return "other"


def context_breakdown(state: SessionState, encoding: Encoding | None = None) -> dict[str, Any]:
    """What the context holds, by category: tokenizer estimates, cached on each block.

    The first call counts every block on the context (bounded by the model's window in a real
    session); later calls count only blocks added since. ``unattributed`` is the part of the
    context figure the log does not show (system prompt, tool definitions, message framing).
    """
    encoding = encoding or encoding_for(state)
    fresh = sum(1 for m in state.context for b in m.blocks if b.tokens is None)
    estimate_messages(state.context, cached(encoding) if fresh >= BULK else encoding)
    totals: dict[str, list[int]] = {}
    for message in state.context:
        for block in message.blocks:
            entry = totals.setdefault(_category(message, block), [0, 0])
            entry[0] += block.tokens or 0
            entry[1] += 1
    estimated = sum(tokens for tokens, _ in totals.values())
    context = context_tokens(state, encoding)
    return {
        "categories": [
            {"category": name, "tokens": totals[name][0], "blocks": totals[name][1]}
            for name in BREAKDOWN_ORDER
            if name in totals
        ],
        "estimated_total": estimated,
        "unattributed": max(context.value - estimated, 0) if context.source != "estimated" else 0,
        "encoding": encoding.name,
    }


def _usage_dict(usage: Usage) -> dict[str, int]:
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


def tool_summary(state: SessionState, encoding: Encoding) -> list[dict[str, Any]]:
    """Calls and result tokens per tool name, each call counted once by its id.

    Incremental: only calls added or changed since the last summary are counted and tallied.
    """
    if state.tool_updates:
        updates = list({id(call): call for call in state.tool_updates}.values())
        state.tool_updates.clear()
        pending = [c for c in updates if c.result_tokens is None and c.result_text is not None]
        if pending:
            counter = cached(encoding) if len(pending) >= BULK else encoding
            counts = counter.count_batch([call.result_text or "" for call in pending])
            for call, count in zip(pending, counts, strict=True):
                call.result_tokens = count
        tally = state.tool_tally
        for call in updates:
            if call.tallied is not None:
                name, tokens, persisted = call.tallied
                entry = tally[name]
                entry[0] -= 1
                entry[1] -= tokens
                entry[2] -= persisted
            now = (call.name, call.result_tokens or 0, call.persisted_to is not None)
            entry = tally.setdefault(call.name, [0, 0, 0])
            entry[0] += 1
            entry[1] += now[1]
            entry[2] += now[2]
            call.tallied = now
    rows = [
        {"name": name, "calls": calls, "result_tokens": tokens, "persisted_outputs": persisted}
        for name, (calls, tokens, persisted) in state.tool_tally.items()
        if calls
    ]
    return sorted(rows, key=lambda row: (-row["result_tokens"], row["name"]))


def _subagent(child: SessionState, encoding: Encoding) -> dict[str, Any]:
    last = child.last_response
    context = context_tokens(child, encoding)
    return {
        "id": child.subagent_id,
        "description": child.description,
        "parent_tool_call_id": child.parent_tool_call_id,
        "model": child.model,
        "file": str(child.path),
        "api_requests": child.api_requests,
        "last_input_tokens_total": last.usage.input_tokens_total if last else None,
        "totals": _totals(child.totals),
        "context_tokens": {"value": context.value, "source": context.source},
    }


def _compaction(compaction: Compaction, window: int | None) -> dict[str, Any]:
    """One compaction; its "after" figure only when the window can hold it (an agent's own
    estimate can be absurd), with where it comes from (logged, request or estimate)."""
    post = compaction.post_tokens
    if post is not None and window and post > window:
        post = None
    return {
        "trigger": compaction.trigger,
        "pre_tokens": compaction.pre_tokens,
        "post_tokens": post,
        "post_tokens_source": None if post is None else compaction.post_source,
        "line": compaction.line,
        "timestamp": compaction.timestamp,
    }


def _parent(state: SessionState) -> dict[str, Any] | None:
    """For a sub-agent's own file: what it is and the session (and tool call) that started it."""
    if state.subagent_id is None:
        return None
    return {
        "id": state.subagent_id,
        "description": state.description,
        "parent_session_id": state.parent_session_id,
        "parent_file": None if state.parent_path is None else str(state.parent_path),
        "parent_tool_call_id": state.parent_tool_call_id,
    }


def build_report(adapter: Adapter, *, breakdown: bool = False) -> dict[str, Any]:
    """The report of one session as a JSON-ready dict (``breakdown``: add ``context_breakdown``)."""
    state = adapter.snapshot()
    info = model_info(state.model)
    encoding = encoding_for(state)
    if state.context_window is not None:
        window, window_source = state.context_window, "logged"
    else:
        window = info.context_window
        window_source = "assumed" if info.assumed else "registry"
    context = context_tokens(state, encoding)
    last = state.last_response
    skipped = list(state.skipped)
    for child in state.subagents.values():
        skipped.extend(child.skipped)
    report: dict[str, Any] = {
        "agent": state.agent,
        "agent_version": state.agent_version,
        "session_id": state.session_id,
        "file": str(state.path),
        "cwd": state.cwd,
        "title": state.title,
        "model": state.model,
        "first_activity": state.first_activity,
        "last_activity": state.last_activity,
        "context_window": window,
        "context_window_source": window_source,
        "last_request": None
        if last is None
        else {
            **_usage_dict(last.usage),
            "response_id": last.key,
            "line": last.line,
            "timestamp": last.timestamp,
        },
        "context_tokens": {
            "value": context.value,
            "source": context.source,
            "reported": context.reported,
            "estimated": context.estimated,
            "estimate_encoding": encoding.name,
        },
        "fill_percent": round(100 * context.value / window, 1) if window else None,
        "autocompact_at": adapter.autocompact_at(window) if window else None,
        "api_requests": state.api_requests,
        "totals": _totals(state.totals),
        "compactions": [_compaction(compaction, window) for compaction in state.compactions],
        "truncations": [
            {
                "pre_tokens": truncation.pre_tokens,
                "post_tokens": truncation.post_tokens,
                "messages_removed": truncation.messages_removed,
                "token_limit": truncation.token_limit,
                "line": truncation.line,
                "timestamp": truncation.timestamp,
            }
            for truncation in state.truncations
        ],
        "tools": tool_summary(state, encoding),
        "subagents": [_subagent(child, encoding) for child in state.subagents.values()],
        "subagent_of": _parent(state),
        "skipped_lines": [
            {"file": skip.path, "line": skip.line, "reason": skip.reason} for skip in skipped
        ],
        "lines_read": state.lines_read,
        "bytes_read": state.bytes_read,
    }
    if breakdown:
        report["context_breakdown"] = context_breakdown(state, encoding)
    return report

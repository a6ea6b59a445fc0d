"""Claude Code's microcompaction: old tool results cleared in place, nothing summarised.

A ``system`` line with ``subtype:"microcompact_boundary"`` names the tool results
(``compactedToolIds``) and attachments (``clearedAttachmentUUIDs``) the agent cleared before a
request; the lines that hold them are not rewritten (agent-log-formats.md §1.7). From that line
on, the model sees each named result as the CLI's marker (below; Claude Code 2.1.332 ``kln``
puts it in place of the result's content) and no longer sees the named attachments. The line is
not a chain break: the lines after it hang off it, as off any other system line.

Some files carry a legacy ``compactMetadata`` beside ``microcompactMetadata``; the latter wins.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Set
from typing import Protocol

from ctxtop.engine.agents.claude_code.entries import MICROCOMPACT, Entry
from ctxtop.engine.sessions.adapter import token_count
from ctxtop.engine.sessions.model import Block, Message, Microcompaction, SessionState

SUBTYPE = MICROCOMPACT
# What Claude Code sends in place of a cleared tool result (2.1.332: ``bln``/``d1i``).
CLEARED_RESULT = "[Old tool result content cleared]"


class Chain(Protocol):
    """The parts of the reader's active chain a microcompaction rewrites."""

    state: SessionState
    nodes: dict[str, tuple[str | None, Message | None]]
    position: dict[str, int]


def event(entry: Entry, line: int) -> Microcompaction:
    meta = entry.microcompact_metadata
    return Microcompaction(
        trigger=str(meta.get("trigger") or "unknown"),
        pre_tokens=token_count(meta.get("preTokens")),
        tokens_saved=token_count(meta.get("tokensSaved")),
        cleared_results=len(entry.cleared),
        cleared_attachments=len(entry.cleared_attachments),
        line=line,
        timestamp=entry.timestamp,
    )


def _cleared(message: Message, tool_ids: Set[str]) -> Message:
    """``message`` with the named results replaced by the marker (a new message and new blocks:
    counts are kept by identity, so the old ones are taken back and the marker counted)."""
    blocks = [
        Block("tool_result", CLEARED_RESULT, block.tool_call_id, is_error=block.is_error)
        if block.kind == "tool_result"
        and block.tool_call_id in tool_ids
        and block.text != CLEARED_RESULT
        else block
        for block in message.blocks
    ]
    if all(new is old for new, old in zip(blocks, message.blocks, strict=True)):
        return message
    return dataclasses.replace(message, blocks=blocks)


def apply(chain: Chain, entry: Entry, line: int) -> None:
    """Record the event (a microcompaction's ``entry``) and clear what it names from the
    session's tool calls and from the context (and from the chain's nodes, so that a later
    rebuild of the chain sees the same)."""
    state = chain.state
    # The requests before it sent the results whole: the system prompt is inferred from the
    # context as they had it until a request follows (as after a compaction).
    state.keep_context()
    state.record_microcompaction(event(entry, line))
    tool_ids = entry.cleared
    attachments = set(entry.cleared_attachments)
    for call_id in tool_ids:
        # The call's result is the marker from now on, in the tools table too (an archived
        # call comes back with it); a call the log shows no result for is left alone.
        call = state.tools.get(call_id)
        had_result = call is not None and (call.result_text is not None or call.result_chars > 0)
        if call is not None and had_result and call.result_text != CLEARED_RESULT:
            state.record_tool_result(call_id, CLEARED_RESULT, is_error=call.is_error)
    results = set(tool_ids)
    kept: list[Message] = []
    changed = False
    for message in state.context:
        node = chain.nodes.get(message.id)
        parent = node[0] if node is not None else None
        if message.kind == "attachment" and message.id in attachments:
            chain.nodes[message.id] = (parent, None)  # a line the chain passes through now
            changed = True
            continue
        cleared = _cleared(message, results) if results else message
        if cleared is not message:
            if node is not None:
                chain.nodes[message.id] = (parent, cleared)
            changed = True
        kept.append(cleared)
    if changed:
        state.context[:] = kept
        chain.position.clear()
        chain.position.update((message.id, index) for index, message in enumerate(kept))

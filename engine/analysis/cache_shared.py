"""What other conversations on the same prompt cache show the cache simulation.

Claude Code's sub-agents talk to the same endpoint as their parent session, through the same
cache: whether it caches up to the breakpoint or the whole prompt, the closing framing after the
breakpoint, and the prefixes one conversation leaves cached are seen by the others, each at the
time its response was logged.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxtop.engine.analysis.cache_shapes import first_prompt_key
from ctxtop.engine.analysis.cache_sim import (
    PARENT_KEY,
    SharedEvidence,
    rule_vote,
)
from ctxtop.engine.sessions.cache_clock import epoch_seconds, write_ttl
from ctxtop.engine.sessions.model import SessionState


def shared_evidence(conversations: Sequence[SessionState]) -> tuple[SharedEvidence, ...]:
    """The logged cache figures of ``conversations`` as evidence for another one, in time
    order."""
    found: list[SharedEvidence] = []
    for conversation in conversations:
        left: tuple[int, int] | None = None  # read + write and prompt of the request before
        for number, response in enumerate(conversation.responses.values()):
            usage = response.usage
            time = epoch_seconds(response.timestamp)
            cached = usage.cache_read_tokens + usage.cache_write_tokens
            if time is None or not cached:
                left = None
                continue
            prompt = usage.input_tokens_total
            vote = (
                rule_vote(left, usage.cache_read_tokens)
                if left and usage.cache_read_tokens
                else None
            )
            found.append(SharedEvidence(time, tail=usage.input_tokens, vote=vote))
            ttl = write_ttl(usage)
            model = response.model or conversation.model
            if conversation.subagent_id is None:
                # The parent's conversation so far, for a sub-agent that sends it first.
                entry = (PARENT_KEY, cached, prompt)
                found.append(SharedEvidence(time, entry=entry, ttl=ttl, model=model))
            if number == 0:
                key = _first_prompt(conversation, response.key, prompt)
                if key is not None:
                    entry = (key, cached, prompt)
                    found.append(SharedEvidence(time, entry=entry, ttl=ttl, model=model))
            left = (cached, prompt)
    found.sort(key=lambda evidence: evidence.time)
    return tuple(found)


def _first_prompt(conversation: SessionState, response: str, prompt: int) -> str | None:
    for index, message in enumerate(conversation.context):
        if message.response_key == response:
            return first_prompt_key(conversation.context[:index], prompt) if index else None
    return None  # no longer on the context (compacted)

"""The whole context right after a compaction, as ``ctxtop report``, ``ctxtop sessions``, the
statusline and the dashboard's gauge give it. Apart from engine/live/session.py so that these
one-shot commands do not import the dashboard's session model (its outline, actions and views)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from engine.errors import CtxtopError
from engine.sessions.model import Compaction
from engine.sessions.sample import Sample, build_sample

if TYPE_CHECKING:  # the statusline's common case needs neither module
    from engine.analysis.snapshot import Analysis
    from engine.sessions.adapter import Adapter


def system_of(analysis: Analysis | None) -> int | None:
    """The system prompt and tools a compaction's "after" adds: as the proxy measured them, else
    the tokenizer's count (inferred from the requests or counted from the log; not the
    calibrated section, which moves with each request: a past event's figure is fixed), else
    None."""
    for section in analysis.sections if analysis is not None else ():
        if section.name == "system" and section.provenance == "measured":
            return section.tokens
    return None if analysis is None else analysis.system_counted


def compaction_after(item: Compaction, outside_log: int | None) -> int | None:
    """A compaction's "after" as the whole context, the gauge's kind of figure: an agent's
    figure smaller than the system prompt and tools counts only the messages (Claude Code's
    postTokens); the next request sends both, so they are added."""
    post = item.post_tokens
    if post is None or not outside_log or post >= outside_log:
        return post
    return post + outside_log


def with_compaction_afters(sample: Sample, outside_log: int | None) -> Sample:
    """``sample`` with each compaction's ``after_tokens`` decided (``compaction_after``)."""
    if not sample.compactions:
        return sample
    decided = tuple(
        item
        if item.after_tokens is not None
        else dataclasses.replace(item, after_tokens=compaction_after(item, outside_log))
        for item in sample.compactions
    )
    return dataclasses.replace(sample, compactions=decided)


def with_whole_context(sample: Sample, analysis: Analysis | None) -> Sample:
    """``sample`` (with its breakdown) as ``ctxtop report`` and the sessions table give it:
    right after a compaction whose "after" counts only the messages, the whole context the
    next request sends, with the analysis's system prompt, as the dashboard's gauge has it;
    each compaction's "after" as the dashboard's events give it."""
    sample = with_compaction_afters(sample, system_of(analysis))
    return whole_after_compaction(sample, system_of(analysis))


def whole_after_compaction(sample: Sample, outside_log: int | None) -> Sample:
    """``sample`` with the whole context after a compaction, before the next request reports
    it. An agent's logged "after" that is smaller than what every earlier request sent besides
    the messages (system prompt, tools: ``outside_log``) counts only the messages (Claude
    Code's postTokens); the next request will send both, so the gauge shows both, and the
    context by kind keeps the part not in the log. Once the log shows more of the new history
    than the agent counted, the figure is what the log shows (as the sections count it: the
    panels' parts add up to the gauge in every sample)."""
    context = sample.context
    if context.source != "compaction" or not outside_log or context.value >= outside_log:
        return sample
    breakdown = sample.breakdown
    in_log = breakdown.estimated_total if breakdown is not None else 0
    value = outside_log + max(context.value, in_log)
    whole = dataclasses.replace(context, value=value)
    if breakdown is not None:
        breakdown = dataclasses.replace(breakdown, unattributed=value - in_log)
    return dataclasses.replace(sample, context=whole, breakdown=breakdown)


def whole_context_quickly(adapter: Adapter, sample: Sample) -> Sample:
    """``with_whole_context`` for a one-shot look without an analysis at hand (the statusline,
    ``ctxtop sessions``): right after a compaction whose "after" counts only the messages, the
    session is analysed for its system prompt (its breakdown counted too, as ``ctxtop report``
    counts it); any other sample is returned as it is, at no cost."""
    if sample.context.source != "compaction":
        return sample
    from engine.analysis.report import analyze_session  # the analysis: only when needed

    try:
        analysis = analyze_session(adapter)
    except CtxtopError:
        return sample
    if sample.breakdown is None:
        sample = build_sample(adapter, breakdown=True)
    return with_whole_context(sample, analysis)


__all__ = [
    "compaction_after",
    "system_of",
    "whole_after_compaction",
    "whole_context_quickly",
    "with_compaction_afters",
    "with_whole_context",
]

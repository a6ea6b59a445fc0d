"""The whole context right after a compaction, as ``ctxtop report``, ``ctxtop sessions``, the
statusline and the dashboard's gauge give it. Apart from engine/live/session.py so that these
one-shot commands do not import the dashboard's session model (its outline, actions and views)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.sessions.model import Compaction
from ctxtop.engine.sessions.sample import Sample, build_sample

# The context figures the log reported (the last request's prompt), whose part beyond the log's
# messages is the part the log does not show.
REPORTED = ("reported", "calibrated")

if TYPE_CHECKING:  # the statusline's common case needs neither module
    from ctxtop.engine.analysis.snapshot import Analysis
    from ctxtop.engine.sessions.adapter import Adapter


def outside_log(
    analysis: Analysis | None, sample: Sample | None = None, earlier: int | None = None
) -> int | None:
    """The part of the context the log does not show (system prompt, tool definitions,
    framing): what the gauge adds right after a compaction and a compaction's "after" adds.
    The analysis's system prompt and tools: as the proxy measured them, else the tokenizer's
    count (inferred from the requests or counted from the log; not the calibrated section, which
    moves with each request: a past event's figure is fixed); without them, what ``sample``'s
    reported figure holds beyond the log's messages; else ``earlier`` (the last such figure, or
    None: not known)."""
    if analysis is not None:
        for section in analysis.sections:
            if section.name == "system" and section.provenance == "measured":
                return section.tokens
        if analysis.system_counted is not None:
            return analysis.system_counted
    breakdown = sample.breakdown if sample is not None else None
    if breakdown is not None and sample is not None and sample.context.source in REPORTED:
        return breakdown.outside_log
    return earlier


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
    outside = outside_log(analysis)
    return whole_after_compaction(with_compaction_afters(sample, outside), outside)


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
        breakdown = dataclasses.replace(breakdown, outside_log=value - in_log)
    return dataclasses.replace(sample, context=whole, breakdown=breakdown)


def whole_context_quickly(adapter: Adapter, sample: Sample) -> Sample:
    """``with_whole_context`` for a one-shot look without an analysis at hand (the statusline,
    ``ctxtop sessions``): right after a compaction whose "after" counts only the messages, the
    session is analysed for its system prompt (its breakdown counted too, as ``ctxtop report``
    counts it); any other sample is returned as it is, at no cost."""
    if sample.context.source != "compaction":
        return sample
    from ctxtop.engine.analysis.report import analyze_session  # the analysis: only when needed

    try:
        analysis = analyze_session(adapter)
    except CtxtopError:
        return sample
    if sample.breakdown is None:
        sample = build_sample(adapter, breakdown=True)
    return with_whole_context(sample, analysis)


__all__ = [
    "compaction_after",
    "outside_log",
    "whole_after_compaction",
    "whole_context_quickly",
    "with_compaction_afters",
    "with_whole_context",
]

"""A proxied session's analysis with what the proxy measured in place of what the log lets
ctxtop estimate or infer. One path for the dashboard (engine/live/proxied_view.py) and
``ctxtop report``, so both show the same figures:

- the "system" section (system prompt and tool definitions): the latest measured request's,
  provenance ``measured``;
- the other sections of the profile (the conversation): scaled so that together they are the
  measured messages' tokens, provenance ``calibrated`` (the total is measured, the split
  between the profile's sections stays the log's estimate: the request has no such split);
- the context by kind: the request's parts by kind as sent (system prompt, tool definitions,
  user and assistant text, tool calls and results, thinking, images, framing), ``measured``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ctxtop.engine.analysis.snapshot import Analysis, Section
from ctxtop.engine.proxy.measured_prompt import MeasuredPrompt

# The proxy's kinds of message parts as the dashboard's "Context by kind" names them.
KIND_NAMES = {
    "instructions": "instructions",  # system and developer messages (the log's category too)
    "user_text": "user",
    "assistant_text": "assistant",
    "tool_use": "tool calls",
    "tool_result": "tool results",
    "thinking": "thinking",
    "image": "images",
    "document": "documents",
    "framing": "framing",
}
# What the window keeps free (not parts of the prompt), and the sections the profile does not
# lay out from the log's messages.
_SPARE = ("autocompact_buffer", "output_reserve", "free")
_NOT_CONVERSATION = ("system", *_SPARE)


def measured_kinds(measured: MeasuredPrompt) -> tuple[tuple[str, int], ...]:
    """The latest measured request by kind, largest first (kinds of no name above: "other")."""
    totals: dict[str, int] = {
        "system prompt": measured.system_tokens,
        "tool definitions": measured.tool_tokens,
    }
    for kind, tokens in measured.kinds:
        name = KIND_NAMES.get(kind, "other")
        totals[name] = totals.get(name, 0) + tokens
    return tuple(sorted(((n, t) for n, t in totals.items() if t > 0), key=lambda p: -p[1]))


def _conversation_factor(analysis: Analysis, measured: MeasuredPrompt) -> float | None:
    estimated = sum(s.tokens for s in analysis.sections if s.name not in _NOT_CONVERSATION)
    return measured.message_tokens / estimated if estimated > 0 else None


def _section(
    section: Section, measured: MeasuredPrompt, factor: float | None, window: int
) -> Section:
    label = section.label
    if section.name == "system":
        tokens, provenance = measured.outside_log, "measured"
        label = label.replace("(inferred)", "(measured)")  # a profile's label may say which
    elif section.name in _NOT_CONVERSATION or factor is None:
        return section
    else:
        tokens, provenance = round(section.tokens * factor), "calibrated"
    share = round(tokens / window, 4) if window else 0.0  # as the analysis rounds its shares
    return dataclasses.replace(
        section, label=label, tokens=tokens, share=share, provenance=provenance
    )


def with_measurement(analysis: Analysis, measured: MeasuredPrompt) -> Analysis:
    """``analysis`` with the measured request's figures in its sections (see the module)."""
    factor = _conversation_factor(analysis, measured)
    window = analysis.thresholds.window
    sections = tuple(_section(section, measured, factor, window) for section in analysis.sections)
    content = sum(s.tokens for s in sections if s.name not in _SPARE)
    residual = analysis.context_tokens - content if analysis.context_source != "estimated" else 0
    return dataclasses.replace(analysis, sections=sections, residual_tokens=residual)


def measurement_json(measured: MeasuredPrompt) -> dict[str, Any]:
    """The measured request as ``ctxtop report --json`` prints it (``provenance: measured``)."""
    return {
        "provenance": "measured",
        "time": measured.time,
        "protocol": measured.protocol,
        "model": measured.model,
        "requests": measured.requests,
        "reported_input_tokens": measured.reported_input,
        "scaled_to_reported": measured.scaled,
        "system_tokens": measured.system_tokens,
        "tool_tokens": measured.tool_tokens,
        "message_tokens": measured.message_tokens,
        "tools": [{"name": tool.name, "tokens": tool.tokens} for tool in measured.tools],
        "kinds": [{"kind": name, "tokens": tokens} for name, tokens in measured_kinds(measured)],
        "breakpoints": [
            {"at": mark.at, "prefix_tokens": mark.prefix_tokens, "ttl": mark.ttl}
            for mark in measured.breakpoints
        ],
    }


def measurement_text(report: dict[str, Any]) -> list[str]:
    """The text report's lines for a measured request (``measurement_json``'s dict)."""
    shown = (
        f"shares of the {report['reported_input_tokens']:,} prompt the API reported"
        if report["scaled_to_reported"]
        else "o200k_base counts (the API reported no prompt size)"
    )
    lines = [
        f"measured   latest proxied request {report['time']} ({report['protocol']},"
        f" {report['requests']} measured): {shown}",
    ]
    for kind in report["kinds"]:
        lines.append(f"  {kind['kind']:<24} {kind['tokens']:>10,}  measured")
    return lines

"""A proxied session's view: the system prompt and tools section as *measured* from the
requests ctxtop's proxy forwarded (``engine.proxy``) instead of inferred from the log."""

from __future__ import annotations

import dataclasses

from engine.live.view import LiveView
from engine.proxy.measured import latest_measurement


def with_measured(view: LiveView) -> LiveView:
    """``view`` with its proxy measurement (if the session went through the proxy) and its
    analysis's system section replaced by the measured figure."""
    measured = latest_measurement(view.session_id)
    if measured is None:
        return dataclasses.replace(view, measured=None) if view.measured else view
    analysis = view.analysis
    if analysis is not None:
        sections = tuple(
            dataclasses.replace(section, tokens=measured.outside_log, provenance="measured")
            if section.name == "system"
            else section
            for section in analysis.sections
        )
        analysis = dataclasses.replace(analysis, sections=sections)
    return dataclasses.replace(view, measured=measured, analysis=analysis)

"""A proxied session's view: its analysis and "Context by kind" as *measured* from the
requests ctxtop's proxy forwarded (``engine.proxy``) instead of estimated or inferred from the
log; the same figures as ``ctxtop report`` (engine/proxy/measured_analysis.py)."""

from __future__ import annotations

import dataclasses

from ctxtop.engine.live.view import CategoryRow, LiveView
from ctxtop.engine.proxy.measured_analysis import measured_kinds, with_measurement
from ctxtop.engine.proxy.measured_prompt import latest_measurement


def with_measured(view: LiveView, opening: str | None = None) -> LiveView:
    """``view`` with its proxy measurement (if the session went through the proxy), its
    analysis's sections and its context by kind taken from the measured request (``opening``:
    see ``latest_measurement``)."""
    measured = latest_measurement(view.session_id, opening)
    if measured is None:
        return dataclasses.replace(view, measured=None) if view.measured else view
    analysis = view.analysis
    if analysis is not None:
        analysis = with_measurement(analysis, measured)
    categories = tuple(
        CategoryRow(name, tokens, "measured") for name, tokens in measured_kinds(measured)
    )
    return dataclasses.replace(view, measured=measured, analysis=analysis, categories=categories)

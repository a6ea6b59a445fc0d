"""One row of the sessions table (``ctxtop sessions --watch``, the dashboard's sessions screen):
a session's figures as ``ctxtop report`` gives them, and what it is doing now.

The figures are computed once per change of the session's file (``session_figures``); the state
(working, waiting for the user, idle, ended, compacting) also depends on the clock, so it is
worked out on every tick from what the figures remembered (``state_of``).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, fields, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ctxtop.engine.agents import written
from ctxtop.engine.analysis.snapshot import Analysis
from ctxtop.engine.sessions.adapter import Adapter
from ctxtop.engine.sessions.ledger import Ledger, encoding_for
from ctxtop.engine.sessions.limits import session_window
from ctxtop.engine.sessions.model import SessionState
from ctxtop.engine.sessions.sample import (
    Sample,
    SubagentSample,
    build_sample,
    context_tokens,
    fill_percent,
)
from ctxtop.engine.sessions.tokenizer_factor import learn

WORKING, WAITING, IDLE, ENDED, COMPACTING = (
    "working",
    "waiting",
    "idle",
    "ended",
    "compacting",
)
# What each state is called on screen: "waiting" is for the user.
STATE_LABEL = {
    WORKING: "working",
    WAITING: "waiting",  # for the user: the model answered
    IDLE: "idle",
    ENDED: "ended",
    COMPACTING: "compacting",
}
# How a row's figures were read: ``ctxtop report``'s (the whole session, with its analysis),
# the whole file quickly (no forecast, cost or sub-agents yet), or its newest bytes only (the
# context and fill those give; no request count, forecast or cost yet).
FULL, QUICK, TAIL = "full", "quick", "tail"

# A session not written for this long is idle, whatever it was doing (the agent is gone or
# stuck); until then it is working or waiting for the user.
IDLE_AFTER_SECONDS = 300.0


@dataclass(frozen=True, slots=True)
class SessionRow:
    """A session (or a sub-agent, with ``parent`` set) as the table shows it."""

    key: str  # the session file (a sub-agent's: its parent's file and its id)
    agent: str
    project: str  # the working directory, the home directory shown as ~
    model: str | None
    fill_percent: float | None  # as ``ctxtop report``: context tokens / the window
    context_tokens: int
    context_source: str  # reported | calibrated | logged | estimated | compaction
    window: int | None
    growth: float | None  # mean context growth per request (the forecast's)
    requests_left: float | None  # before auto-compaction (or a full budget), the forecast's
    cost: float | None  # USD so far, where the model's prices are known
    requests: int | None  # None: not counted yet (``figures`` "tail")
    last_write: float  # epoch seconds: when the agent last wrote the session's files
    state: str = WORKING
    answered: bool = False  # the last message is the model's answer: the user's turn
    compacting: bool = False
    cost_simulated: bool = False  # priced from the cache simulation, not the log's figures
    session_id: str | None = None
    title: str | None = None
    parent: str | None = None  # the parent row's key, for a sub-agent
    children: tuple[SessionRow, ...] = ()
    figures: str = FULL  # FULL, QUICK or TAIL: how much of the session was read

    def to_json(self) -> dict[str, Any]:
        data = {name: getattr(self, name) for name in _JSON_FIELDS}
        data["children"] = [child.to_json() for child in self.children]
        return data


# A row's fields in its JSON, but for its children (each its own) and what the state tells.
_JSON_FIELDS = tuple(
    f.name for f in fields(SessionRow) if f.name not in ("children", "answered", "compacting")
)


def short_project(cwd: str | None, home: Path) -> str:
    """The working directory with the home directory as ``~`` (``-`` when unknown)."""
    if not cwd:
        return "-"
    text = str(home)
    if cwd == text:
        return "~"
    if text not in ("", "/") and cwd.startswith(text + "/"):
        return "~" + cwd[len(text) :]
    return cwd


def answered(state: SessionState) -> bool:
    """The last message on the context is the model's answer with no tool call pending: the
    agent waits for the user (a prompt, tool results or a call mean the model is at work)."""
    if not state.context:
        return False
    last = state.context[-1]
    if last.role != "assistant":
        return False
    kinds = {block.kind for block in last.blocks}
    return "text" in kinds and "tool_use" not in kinds


def log_seconds(stamp: str | None) -> float | None:
    """A log's ISO timestamp as epoch seconds (None when absent or unreadable)."""
    if not stamp:
        return None
    with contextlib.suppress(ValueError):
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    return None


def _cost(analysis: Analysis | None) -> float | None:
    """The cost of the requests so far: priced from the log's own cache figures where it has
    them (``analysis.cache.logged_cost`` of ``ctxtop report --json``), else the simulation's."""
    if analysis is None:
        return None
    cache = analysis.cache
    return cache.logged_cost if cache.logged_cost is not None else cache.cost


def session_figures(
    sample: Sample, analysis: Analysis | None, state: SessionState, home: Path
) -> SessionRow:
    """The row of a session from its sample and analysis (``last_write`` still to be set);
    ``state``: the session the sample was taken of."""
    forecast = analysis.forecast if analysis is not None else None
    parent = SessionRow(
        key=sample.file,
        agent=sample.agent,
        project=short_project(sample.cwd, home),
        model=sample.model,
        fill_percent=sample.fill_percent,
        context_tokens=sample.context.value,
        context_source=sample.context.source,
        window=sample.window.tokens,
        growth=forecast.growth_per_request if forecast is not None else None,
        requests_left=forecast.requests_left if forecast is not None else None,
        cost=_cost(analysis),
        cost_simulated=analysis is not None and analysis.cache.logged_cost is None,
        requests=sample.api_requests,
        last_write=0.0,
        answered=answered(state),
        session_id=sample.session_id,
        title=sample.title,
    )
    children = tuple(
        _subagent_row(parent, key, child, figures)
        for (key, child), figures in zip(state.subagents.items(), sample.subagents, strict=True)
    )
    return replace(parent, children=children)


def quick_figures(adapter: Adapter, home: Path, figures: str) -> SessionRow:
    """The row of what ``adapter`` read (``figures``: QUICK, the whole file; TAIL, its newest
    bytes) without an analysis: the context and window as ``build_sample`` decides them, none
    of its other counts (tools, sub-agents, history). Right after a compaction (the whole
    context needs the system prompt an analysis gives), the sample and analysis as
    ``ctxtop report`` makes them."""
    state = adapter.snapshot()
    ledger = Ledger()
    encoding = encoding_for(state)
    context = context_tokens(
        state, ledger, encoding, learn(state, ledger, encoding, fit_calls=False)
    )
    if context.source == "compaction":
        from ctxtop.engine.live.whole import whole_context_quickly

        sample = whole_context_quickly(adapter, build_sample(adapter, ledger))
        context = sample.context
    window = session_window(state, adapter.cli_window)
    return SessionRow(
        key=str(state.path),
        agent=state.agent,
        project=short_project(state.cwd, home),
        model=state.model,
        fill_percent=fill_percent(context.value, window.tokens),
        context_tokens=context.value,
        context_source=context.source,
        window=window.tokens,
        growth=None,
        requests_left=None,
        cost=None,
        requests=state.api_requests if figures == QUICK else None,
        last_write=0.0,
        answered=answered(state),
        compacting=adapter.compacting(),
        session_id=state.session_id,
        title=state.title,
        figures=figures,
    )


def _subagent_row(
    parent: SessionRow, key: str, child: SessionState, figures: SubagentSample
) -> SessionRow:
    """A sub-agent's own context against its model's window (no forecast, no cost: those are
    the parent session's)."""
    context = figures.context
    written = _written(child.path) if child.path != Path(parent.key) else None
    return SessionRow(
        key=f"{parent.key}#{key}",
        agent=parent.agent,
        project=child.description or key,
        model=child.model or parent.model,
        fill_percent=figures.fill_percent,
        context_tokens=context.value,
        context_source=context.source,
        window=figures.window.tokens,
        growth=None,
        requests_left=None,
        cost=None,
        requests=child.api_requests,
        last_write=written or log_seconds(child.last_activity) or 0.0,
        answered=answered(child),
        session_id=child.subagent_id,
        title=child.description,
        parent=parent.key,
    )


def _written(path: Path) -> float | None:
    try:
        return written(path)[0]
    except OSError:
        return None


def state_of(
    row: SessionRow, now: float, gone: bool = False, last_write: float | None = None
) -> str:
    """What the session is doing at ``now``: ended (its file is gone), compacting, idle (not
    written for ``IDLE_AFTER_SECONDS``), else waiting for the user or working (``last_write``:
    instead of the row's)."""
    if gone:
        return ENDED
    if row.compacting:
        return COMPACTING
    written = row.last_write if last_write is None else last_write
    if now - written > IDLE_AFTER_SECONDS:
        return IDLE
    return WAITING if row.answered else WORKING


def at(row: SessionRow, now: float, gone: bool = False) -> SessionRow:
    """``row`` (and its sub-agents) with the state at ``now``."""
    children = tuple(at(child, now) for child in row.children)
    return replace(row, state=state_of(row, now, gone), children=children)

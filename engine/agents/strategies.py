"""When each known compaction strategy would fire on a live session, and what it would do.

- VS Code Copilot Chat: background compaction at about 80 % of the window when the prompt cache
  is warm (jittered between 0.78 and 0.82 per conversation), 90 % when it is cold; a finished
  background summary is dropped if the fill has fallen below 65 % meanwhile.
- CodeCompanion: context editing at 65 %, compaction at 85 %, skipped when it would save under
  10,000 tokens.
- Each agent with a rule of its own (``Agent.auto_compact``, in engine/agents/<agent>/rules.py):
  Claude Code at its auto-compact point (window − output reserve − 13,000; environment
  overrides), Codex at ``model_auto_compact_token_limit`` from its config.toml, else 90 %.
  The session's own agent is at the session's auto-compact point instead, the one its sample
  decided (engine/sessions/limits.py, ``ctxtop report``'s ``autocompact_at``, the gauge's ``A``):
  its reader knows what the generic rule does not (the window Codex logged is the effective
  one; the project's settings).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxtop.engine.agents import AGENTS
from ctxtop.engine.agents.agent_window import agent_window
from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.sessions.limits import autocompact_point
from ctxtop.engine.sessions.model import SessionState
from ctxtop.engine.sessions.sample import context_tokens

CACHE_TTL_SECONDS = 300  # a prompt cache entry lives about 5 minutes after its last use
COPILOT_WARM = (0.78, 0.82)
COPILOT_COLD = 0.90
COPILOT_DROP_BELOW = 0.65
CODECOMPANION_EDIT = 0.65
CODECOMPANION_COMPACT = 0.85
CODECOMPANION_MIN_SAVING = 10_000
NEVER = "never: auto-compact off"
# The ``source`` of the session's own agent's row: the session's auto-compact point.
SESSION_POINT = "session"
LABELS = {
    "copilot": "Copilot",
    "codecompanion-editing": "CodeCompanion edit",
    "codecompanion-compaction": "CodeCompanion compact",
}


def copilot_jitter(session_key: str) -> float:
    """This conversation's warm-cache threshold: fixed per session, within 0.78–0.82."""
    digest = hashlib.sha256(session_key.encode("utf-8")).digest()
    low, high = COPILOT_WARM
    return round(low + (high - low) * int.from_bytes(digest[:4], "big") / 0xFFFFFFFF, 4)


def cache_warm(state: SessionState, now: datetime) -> bool:
    if not state.last_activity:
        return False
    try:
        last = datetime.fromisoformat(state.last_activity.replace("Z", "+00:00"))
    except ValueError:
        return False
    if last.tzinfo is None:
        last = last.replace(tzinfo=UTC)
    return (now - last).total_seconds() <= CACHE_TTL_SECONDS


def _entry(
    name: str, at: int | None, fill: int, window: int, action: str, does: str, **extra: Any
) -> dict[str, Any]:
    return {
        "strategy": name,
        "at_tokens": at,
        "at_fraction": round(at / window, 4) if at and window else None,
        "fires": at is not None and fill >= at,
        "action": action,
        "does": does,  # the action in a word or two, for a table
        **extra,
    }


def simulate(
    state: SessionState,
    autocompact_at: int | None,
    *,
    saving: int | None = None,
    now: datetime | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> dict[str, Any]:
    """Each strategy's trigger on this session; ``autocompact_at`` is the session's own
    auto-compact point as its sample decided it (the row of its agent), ``saving`` what a
    compaction would save (ctxtop's own estimate), for CodeCompanion's minimum."""
    env = os.environ if env is None else env
    now = now or datetime.now(UTC)
    window = agent_window(state).tokens
    fill = context_tokens(state).value
    warm = cache_warm(state, now)
    jitter = copilot_jitter(state.session_id or str(state.path))
    copilot_at = int(window * (jitter if warm else COPILOT_COLD))
    edit_at = int(window * CODECOMPANION_EDIT)
    compact_at = int(window * CODECOMPANION_COMPACT)
    too_small = saving is not None and saving < CODECOMPANION_MIN_SAVING
    strategies = [
        _entry(
            "copilot",
            copilot_at,
            fill,
            window,
            "summarise in the background, keeping the current turn verbatim",
            "compact",
            cache="warm" if warm else "cold",
            drop_summary_below_tokens=int(window * COPILOT_DROP_BELOW),
        ),
        _entry(
            "codecompanion-editing",
            edit_at,
            fill,
            window,
            "clear old tool results (context editing)",
            "edit",
        ),
        _entry(
            "codecompanion-compaction",
            compact_at,
            fill,
            window,
            "skipped: it would save under 10,000 tokens"
            if too_small
            else "summarise the conversation",
            "skip: saves < 10k" if too_small else "compact",
            skipped=too_small,
        ),
    ]
    for agent in AGENTS.values():  # each agent's own strategy (engine/agents/<agent>/rules.py)
        if agent.auto_compact is None:
            continue
        rule = agent.auto_compact.at(window, state.model, env, home or Path.home())
        at, does, extra = rule.at_tokens, rule.does, rule.extra
        if agent.name == state.agent:  # the session's own point, not the rule again
            at, extra = autocompact_at, {"source": SESSION_POINT}
            does = "compact" if at is not None else NEVER
        strategies.append(_entry(agent.name, at, fill, window, rule.action, does, **extra))
    strategies[2]["fires"] = strategies[2]["fires"] and not too_small
    return {"window": window, "fill_tokens": fill, "strategies": strategies}


def simulate_file(path: str | Path, saving: int | None = None) -> dict[str, Any] | None:
    """The simulation for a session file (None when ctxtop cannot read the format yet), with
    the session's auto-compact point as its sample decides it."""
    reader = SessionReader(path)
    try:
        state = read_all(reader)
    except CtxtopError:
        return None
    adapter = reader.adapter
    assert adapter is not None  # a state was read
    point = autocompact_point(adapter.autocompact_at, agent_window(state).tokens)
    return simulate(state, point, saving=saving)


def _label(strategy: str) -> str:
    agent = AGENTS.get(strategy)
    if agent is not None and agent.auto_compact is not None:
        return agent.auto_compact.label
    return LABELS.get(strategy, strategy)


def schedule(
    simulation: Mapping[str, Any], growth_per_request: float | None
) -> list[dict[str, Any]]:
    """``simulate``'s strategies with how far each is from the current fill: ``tokens_away``
    (0 once it fires; None when it never does) and ``requests_away`` at ``growth_per_request``
    (the analysis forecast's mean growth; None when unknown or the context is not growing)."""
    fill = simulation["fill_tokens"]
    growing = growth_per_request is not None and growth_per_request > 0
    rows: list[dict[str, Any]] = []
    for entry in simulation["strategies"]:
        at = entry["at_tokens"]
        away = None if at is None else max(at - fill, 0)
        requests = None
        if away is not None and growing and growth_per_request:
            requests = round(away / growth_per_request, 1)
        label = _label(entry["strategy"])
        if entry.get("cache"):
            label += f" ({entry['cache']})"
        rows.append({**entry, "label": label, "tokens_away": away, "requests_away": requests})
    return rows

"""``ctxtop statusline``: one short line for Claude Code's status bar.

Claude Code runs the status-line command with a JSON object on stdin (``transcript_path``,
``model``, ``context_window`` …) and shows the first line printed. Its ``context_window
.context_window_size`` is the window the CLI itself uses (2.1.332: the model's window), so it
wins over the registry's, and the auto-compact distance is measured against it. ctxtop reads
the transcript's tail (a quick look: the latest request and context are right) and prints fill
against the window, the distance to auto-compaction, the largest part of the context and the
prompt cache's clock (engine/sessions/cache_clock.py; Claude Code's own ``prompt_cache`` block
of the JSON wins when it is there).
Without a readable transcript it falls back to the figures in the JSON itself: Claude Code
blanks its line when the command fails, so a transcript ctxtop cannot read is said on stderr
(Claude Code's debug log) while the line still shows what the JSON gives.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ctxtop.engine.agents.session_reader import SessionReader
from ctxtop.engine.config import Thresholds
from ctxtop.engine.models.window import unknown_window_note
from ctxtop.engine.sessions.adapter import Adapter
from ctxtop.engine.sessions.cache_clock import (
    CLAUDE_CODE,
    agent_cache,
    agent_words,
    cache_clock,
    state_text,
    usd,
)
from ctxtop.engine.sessions.limits import (
    CRITICAL,
    WARNING,
    autocompact_point,
    fill_level,
    trigger_points,
)
from ctxtop.engine.sessions.sample import Sample, build_sample, fill_percent
from ctxtop.engine.tokens.short import provenance_mark, short_tokens

NO_TRANSCRIPT = "ctx: no transcript yet"  # a session's start: nothing to show yet
UNREADABLE = "ctx: transcript unreadable (see claude --debug)"  # its error went to stderr
# Enough of the transcript's end for the latest request and the context since the last compaction.
TAIL_BYTES = 4 << 20


def _k(tokens: int) -> str:
    return short_tokens(tokens, digits=0)


def _json_window(data: dict[str, Any]) -> tuple[int | None, int | None]:
    """(tokens, window) from the status JSON's own ``context_window`` block, when present."""
    block = data.get("context_window")
    if not isinstance(block, dict):
        return None, None
    window = block.get("context_window_size")
    usage = block.get("current_usage")
    tokens = None
    if isinstance(usage, dict):
        tokens = sum(
            int(usage.get(key) or 0)
            for key in (
                "input_tokens",
                "cache_creation_input_tokens",
                "cache_read_input_tokens",
                "output_tokens",
            )
        )
    return tokens, int(window) if isinstance(window, int) and window > 0 else None


def _sample(data: dict[str, Any]) -> tuple[Sample, Adapter] | None:
    path = data.get("transcript_path")
    if not isinstance(path, str) or not Path(path).is_file():
        return None
    reader = SessionReader(path, tail_bytes=TAIL_BYTES)
    while reader.poll(as_it_stands=True):
        pass
    if reader.adapter is None:
        return None
    from ctxtop.engine.live.whole import whole_context_quickly

    sample = build_sample(reader.adapter, breakdown=True)
    return whole_context_quickly(reader.adapter, sample), reader.adapter


def largest_part(sample: Sample) -> tuple[str, int] | None:
    """The biggest category of the context breakdown (tokenizer estimates)."""
    categories = sample.breakdown.categories if sample.breakdown is not None else ()
    if not categories:
        return None
    top = max(categories, key=lambda entry: entry.tokens)
    return top.name, top.tokens


def cache_part(sample: Sample | None, data: dict[str, Any], now: float) -> str | None:
    """``cache warm 3:12* · +$0.07 after*`` / ``cache cold since 14:05* · next $0.14*``: the
    clock, and what the next request pays for the cached prefix (ctxtop's estimate from the
    log, marked); Claude Code's own figures say so."""
    prefix = sample.cache_prefix if sample is not None else None
    model = sample.model if sample is not None else None
    clock = cache_clock(prefix, now, model, agent_cache(data))
    if clock is None:
        return None
    mark = provenance_mark("inferred")
    if clock.source == CLAUDE_CODE:
        text = f"{state_text(clock, now)} ({agent_words(clock)})"
    else:
        text = state_text(clock, now) + mark
    if clock.waiting_cost is not None and clock.warm:
        text += f" · +{usd(clock.waiting_cost)} after{mark}"
    elif clock.rewrite_cost is not None and not clock.warm:
        text += f" · next {usd(clock.rewrite_cost)}{mark}"
    return text


# The mark before the line at each level of the fill (the dashboard's gauge's colours).
LEVEL_MARK = {CRITICAL: "!! ", WARNING: "! "}


def state_mark(
    tokens: int, window: int, thresholds: Thresholds, autocompact: int | None = None
) -> str:
    """``!! `` where the gauge is red, ``! `` where it is yellow (``fill_level``)."""
    return LEVEL_MARK.get(fill_level(tokens, trigger_points(window, thresholds), autocompact), "")


def status_line(
    data: dict[str, Any], thresholds: Thresholds | None = None, now: float | None = None
) -> str:
    """The line to print for one status-line JSON object (``now``: epoch seconds, for the
    cache clock)."""
    thresholds = thresholds or Thresholds()
    read = _sample(data)
    sample = read[0] if read is not None else None
    json_tokens, json_window = _json_window(data)
    unknown = None
    if read is not None:
        sample, adapter = read
        tokens, source = sample.context.value, sample.context.source
        # The window Claude Code states for the session wins, and the auto-compact point is
        # the agent's rule applied to it.
        window = json_window or sample.window.tokens
        autocompact = sample.autocompact_at
        if json_window and json_window != sample.window.tokens:
            autocompact = autocompact_point(adapter.autocompact_at, json_window)
        elif not json_window:
            unknown = unknown_window_note(sample.window)
    elif json_tokens is not None and json_window:
        tokens, source, window, autocompact = json_tokens, "reported", json_window, None
    else:
        return NO_TRANSCRIPT
    percent = fill_percent(tokens, window)
    if percent is None or not window:
        return f"ctx {_k(tokens)}{provenance_mark(source)}"
    figure = f"{_k(tokens)}{provenance_mark(source)}/{_k(window)}"
    mark = state_mark(tokens, window, thresholds, autocompact)
    parts = [f"{mark}ctx {percent:.0f}% {figure}"]
    if unknown is not None:
        parts.append(unknown)
    if autocompact is not None:
        left = max(autocompact - tokens, 0)
        parts.append(f"{_k(left)} to auto-compact")
    largest = largest_part(sample) if sample is not None else None
    if largest is not None:
        # A category of the context by kind: the tokenizer's estimate, marked so.
        parts.append(
            f"largest {largest[0].replace('_', ' ')} {_k(largest[1])}{provenance_mark('estimated')}"
        )
    cache = cache_part(sample, data, time.time() if now is None else now)
    if cache is not None:
        parts.append(cache)
    return " · ".join(parts)

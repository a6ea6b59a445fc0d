"""Helpers for the dashboard tests: a sample session written to a temp file part by part."""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import AsyncIterator, Callable, Coroutine
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ParamSpec

from textual.pilot import Pilot

from ctxtop.engine.live.demo import demo_companions, demo_lines

# 42 s after the demo sample's last record (2026-11-22T14:04:41Z): "agent wrote 42 s ago" in
# every time zone, for a file written then; the header's clock shows it in UTC.
LAST_RECORD = "2026-11-22T14:04:41+00:00"
FROZEN = datetime(2026, 11, 22, 14, 5, 23, tzinfo=UTC)
# The demo sample's /compact: the compaction record is on this line (1-based).
COMPACTION_LINE = 65


def frozen_clock() -> datetime:
    return FROZEN


def write_lines(path: Path, count: int, start: int = 0) -> None:
    """Append lines ``start`` … ``start + count`` of the demo sample to ``path``."""
    with path.open("ab") as out:
        out.write(b"".join(demo_lines()[start : start + count]))


async def wait_until(pilot: Pilot[None], predicate: Callable[[], bool], limit: float = 60) -> None:
    """Let the app run until ``predicate()`` holds (a safety limit, not a timing assertion: a
    loaded 2-core CI machine can take many seconds for a fork write or a first analysis)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("the dashboard never reached the expected state")
        await pilot.pause(0.02)


async def append_each_line(
    pilot: Pilot[None], app: Any, session: Path, start: int
) -> AsyncIterator[int]:
    """Append the demo sample's lines from ``start`` to ``session`` one at a time, as the demo
    writes them; after each, once the dashboard has read it and analysed it, yield how many
    lines the file has."""
    for line in range(start, len(demo_lines())):
        write_lines(session, 1, start=line)
        await wait_until(
            pilot,
            lambda end=line + 1: (
                app.view is not None
                and app.view.lines_read == end
                and not app.sections.has_class("lagging")
                and getattr(app, "_waiting", None) is None
            ),
        )
        yield line + 1


P = ParamSpec("P")


def synchronous(test: Callable[P, Coroutine[Any, Any, None]]) -> Callable[P, None]:
    """Run an async test in its own event loop (no async pytest plugin needed)."""

    @functools.wraps(test)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        asyncio.run(test(*args, **kwargs))

    return run


def result_labels(app: Any) -> dict[str | None, str]:
    """Every tool result's label in the app's prompt tree (opened to build it), by its
    tool_call_id."""
    tree = app.prompt_tree.outline_tree
    labels: dict[str | None, str] = {}
    for node in tree.outline.nodes:
        if node.kind == "tool_result":
            tree.reveal(node.id)
            labels[node.call_id] = str(tree.built[node.id].label)
    return labels


def screen_lines(widget: Any) -> list[str]:
    """The lines ``widget`` draws now (its border included), as text."""
    return [
        "".join(segment.text for segment in widget.render_line(y))
        for y in range(widget.size.height)
    ]


def event_texts(app: Any) -> list[str]:
    """Each event's text in the Events panel, a ctxtop action's without the local time of day
    it starts with."""
    table = app.events
    texts = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
    return [re.sub(r"^\d\d:\d\d:\d\d (?=ctxtop )", "", text) for text in texts]


def screen_rows(app: Any) -> list[str]:
    """What the terminal shows now, one string a row (every layer composited)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def write_companions(session: Path) -> None:
    """The sample's sub-agent log and persisted tool output, beside ``session`` as the demo
    has them."""
    for files in demo_companions(demo_lines()).values():
        for relative, data in files:
            path = session.with_suffix("").joinpath(*relative.parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)

"""The editing (``e``) and compaction (``c``) panels start from the session the dashboard
already holds: opening one and previewing does not run the session reader over the file again
(only its bytes are read, for the fork), and each preview is the one ``load`` makes of the
same bytes, figure for figure and byte for byte. The dashboard's session includes its
sub-agents and may have let go of old tool results' texts: neither changes a preview. A paused
dashboard's panels preview its frozen sample."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dashboard_support import frozen_clock, synchronous, wait_until, write_companions, write_lines
from textual.pilot import Pilot
from textual.widgets import Input

from ctxtop.engine.agents import session_reader
from ctxtop.engine.forks import transaction
from ctxtop.engine.forks.compact import preview_compact
from ctxtop.engine.forks.edit import preview_edit
from ctxtop.engine.forks.transaction import (
    COMPACTING,
    EDITING,
    Details,
    Preview,
    load,
    unwritten,
)
from ctxtop.engine.live.demo import demo_lines
from ctxtop.engine.live.session import LiveSession
from ctxtop.engine.sessions import model
from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.screens.compact_panel import CompactScreen
from ctxtop.tui.screens.edit_panel import EditScreen
from ctxtop.tui.screens.fork_panel import ForkPanel

ROOT = Path(__file__).resolve().parents[2]
DEMO = demo_lines()
DEMO_NAME = "b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl"  # the demo's own name: its sub-agents
MANY_RESULTS = (
    ROOT / "sample_sessions/claude-code/projects/-path-to-Demo"
    "/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
)
CODEX = (  # one turn of many tool calls, by the real Codex CLI
    ROOT / "tests/data/one_turn/codex"
    "/rollout-2026-11-25T06-15-28-01a21158-4b37-7df3-a955-6d9dc9b742b0.jsonl"
)


def demo_with_subagents(folder: Path) -> Path:
    """The demo's session (a compaction in it) with its sub-agent's log beside it."""
    session = folder / DEMO_NAME
    write_lines(session, len(DEMO))
    write_companions(session)
    return session


def copied(source: Path) -> Any:
    def make(folder: Path) -> Path:
        session = folder / source.name
        shutil.copyfile(source, session)
        return session

    return make


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Reads of a session's bytes by the session reader, by the file they are of (a fork's
    read back is named after the fork): ``read_session_data`` (how ``load`` reads one), and
    any reader of bytes in memory (the dashboard's own reader follows the file)."""
    counts: Counter[str] = Counter()
    real_init = session_reader.SessionReader.__init__
    real_read = transaction.read_session_data

    def init(self: Any, path: Any, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("data") is not None:
            counts[Path(path).name] += 1
        real_init(self, path, *args, **kwargs)

    def read(path: Any, *args: Any) -> Any:
        counts["read_session_data " + Path(path).name] += 1
        return real_read(path, *args)

    monkeypatch.setattr(session_reader.SessionReader, "__init__", init)
    monkeypatch.setattr(transaction, "read_session_data", read)
    return counts


def made_anew(fork: bytes, session: bytes) -> bytes:
    """``fork`` with what each fork makes anew (its ids, the time it was made) named in the
    order they first appear."""
    names: dict[bytes, bytes] = {}

    def name(found: re.Match[bytes]) -> bytes:
        text = found.group()
        return text if text in session else names.setdefault(text, b"<new %d>" % len(names))

    pattern = rb"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}|\d{4}-\d\d-\d\dT[\d:.]+Z"
    return re.sub(pattern, name, fork)


def outcome(preview: Preview[Details]) -> tuple[dict[str, Any], bytes]:
    """All a preview shows and would write (but the ids and time a fork is made with)."""
    return (
        unwritten(preview, dry_run=True).as_json(),
        made_anew(preview.fork_data, preview.loaded.data),
    )


def from_load(screen: ForkPanel[Any]) -> Callable[[], tuple[dict[str, Any], bytes]]:
    """What the panel's choices (as they are now) preview of the session loaded from the
    file, on call."""
    path, sample = screen.path, screen.sample
    if isinstance(screen, EditScreen):
        policy = screen.policy()
        assert policy is not None
        return lambda: outcome(
            preview_edit(load(path, EDITING, sample.upto), policy, shown=sample.shown)
        )
    assert isinstance(screen, CompactScreen)
    choice = screen.choice()
    assert choice is not None
    summarizer, keep_rounds = choice
    return lambda: outcome(
        preview_compact(
            load(path, COMPACTING, sample.upto),
            summarizer=summarizer,
            keep_rounds=keep_rounds,
            shown=sample.shown,
        )
    )


async def panel_outcome(pilot: Pilot[None], app: CtxtopApp, key: str) -> ForkPanel[Any]:
    """The panel of ``key`` once it shows a preview (the compaction's keeping one round)."""
    await pilot.press(key)
    screen = app.screen
    assert isinstance(screen, EditScreen | CompactScreen)
    if isinstance(screen, CompactScreen):
        screen.query_one("#compact-keep-rounds", Input).value = "1"
        await pilot.pause()  # the first preview's outcome dropped
    await wait_until(pilot, lambda: screen.outcome is not None and previews_done(app))
    return screen


def previews_done(app: CtxtopApp) -> bool:
    """No panel's preview is running (one still running when its panel is closed fails)."""
    return not any(w.group.endswith("-preview") and not w.is_finished for w in app.workers)


@pytest.mark.parametrize(
    "make",
    [demo_with_subagents, copied(MANY_RESULTS), copied(CODEX)],
    ids=["demo", "many", "codex"],
)
@synchronous
async def test_the_panels_preview_from_the_dashboards_session(
    make: Any, tmp_path: Path, reads: Counter[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The session keeps the texts of its newest results only (a long session's memory).
    monkeypatch.setattr(model, "RESULT_BUDGET", 300)
    session = make(tmp_path)
    app = CtxtopApp(session, clock=frozen_clock)
    shown: list[tuple[tuple[dict[str, Any], bytes], Callable[[], Any]]] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.view is not None and app.view.analysis is not None)
        state = app.feed.session.reader.adapter.state  # type: ignore[union-attr]
        archived = len(state.tools.archived)
        for key in ("e", "c"):
            screen = await panel_outcome(pilot, app, key)
            assert screen.outcome is not None
            shown.append((outcome(screen.outcome.preview), from_load(screen)))
            await pilot.press("escape")
    assert archived  # old results' texts let go of
    if make is demo_with_subagents:
        assert state.subagents  # the dashboard's session includes its sub-agent
    # Neither panel ran the reader over the session (only over each fork, to read it back).
    assert reads["read_session_data " + session.name] == reads[session.name] == 0
    assert reads.total() >= 2  # (each fork read back)
    for preview, loaded in shown:
        assert preview == loaded()
    assert reads["read_session_data " + session.name] == 2  # (the loads just made to compare)


@synchronous
async def test_a_paused_dashboards_panels_preview_its_frozen_sample(
    tmp_path: Path, reads: Counter[str]
) -> None:
    """Paused: the panels start from the dashboard's session at the frozen sample, also once
    the agent wrote after it (a copy kept before the dashboard read on), and the preview is
    ``load``'s of the sample's bytes; resumed, from the newer sample."""
    session = tmp_path / DEMO_NAME
    write_lines(session, len(DEMO) - 4)
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.view is not None and app.view.analysis is not None)
        await pilot.press("space")
        screen = await panel_outcome(pilot, app, "e")
        assert screen.outcome is not None
        frozen, loaded = outcome(screen.outcome.preview), from_load(screen)
        await pilot.press("escape")

        write_lines(session, 4, start=len(DEMO) - 4)  # the agent goes on meanwhile
        await wait_until(pilot, lambda: app._held is not None)
        later = await panel_outcome(pilot, app, "e")
        assert later.outcome is not None
        assert later.sample.upto == screen.sample.upto
        assert outcome(later.outcome.preview) == frozen
        await pilot.press("escape")

        await pilot.press("space")  # resumed: the newer sample
        await wait_until(pilot, lambda: app.view is not None and app.view.lines_read == len(DEMO))
        newer = await panel_outcome(pilot, app, "e")
        assert newer.outcome is not None and newer.sample.upto == session.stat().st_size
        resumed, newer_loaded = outcome(newer.outcome.preview), from_load(newer)
        assert reads["read_session_data " + session.name] == reads[session.name] == 0
    assert frozen == loaded()
    assert resumed == newer_loaded() and resumed != frozen


def test_the_dashboards_copy_is_its_own(tmp_path: Path) -> None:
    """The copy a panel starts from is the session at the sample's bytes, and stays so while
    the dashboard reads on (the feed changes its own session in place); none when the
    dashboard is past the sample's bytes, unless it was paused there; no sub-agent's window
    in it."""
    session = demo_with_subagents(tmp_path)
    data = session.read_bytes()
    session.write_bytes(data[: data.index(DEMO[-5])])  # the last 5 lines still to come
    dashboard = LiveSession(session, analysis=False)
    dashboard.poll()
    live = dashboard.reader.adapter.state  # type: ignore[union-attr]
    upto = live.bytes_read
    copied = dashboard.state_at(upto)
    assert copied is not None and copied is not live and not copied.subagents
    assert live.subagents  # the dashboard's own has its sub-agent
    context = [(m.id, [b.content() for b in m.blocks]) for m in copied.context]
    assert context == [(m.id, [b.content() for b in m.blocks]) for m in live.context]

    session.write_bytes(data)
    dashboard.poll()
    assert live.bytes_read > upto and len(live.context) > len(copied.context)
    assert [(m.id, [b.content() for b in m.blocks]) for m in copied.context] == context
    assert copied.bytes_read == upto
    assert dashboard.state_at(upto) is None  # past the sample: the panel reads the file

    # Paused at the sample: a copy is kept there before the dashboard reads on.
    session.write_bytes(data[: data.index(DEMO[-5])])
    dashboard = LiveSession(session, analysis=False)
    dashboard.poll()
    dashboard.keep_at(upto)
    dashboard.poll()  # nothing new: nothing copied
    session.write_bytes(data)
    dashboard.poll()
    kept = dashboard.state_at(upto)
    assert kept is not None and kept.bytes_read == upto
    assert [(m.id, [b.content() for b in m.blocks]) for m in kept.context] == context
    dashboard.keep_at(None)  # resumed
    assert dashboard.state_at(upto) is None

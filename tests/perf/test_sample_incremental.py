"""A sample copies what it shows out of the session, so that it stays as it was: after each
append, the newest compaction and those added since, not every compaction of the history; the
dashboard's event log writes the text of those only (of all when the figure a Claude Code
compaction's messages-only "after" is shown with, what the log does not show, changed).

The sessions are the bundled Claude Code logs with a compaction, repeated with fresh ids (each
copy ends in its own compaction). Work is counted, never timed: compactions copied per update.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from session_copies import COMPACTED, copies

from ctxtop.engine.live import session
from ctxtop.engine.live.session import LiveSession
from ctxtop.engine.live.view import Event
from ctxtop.engine.live.whole import outside_log
from ctxtop.engine.sessions import sample
from ctxtop.engine.sessions.ledger import Ledger
from ctxtop.engine.sessions.model import Compaction, SessionState

APPENDS = 12


def copied_per_update(tmp_path: Path, count: int, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Compactions copied by the samples of the updates after each of the last 12 lines of a
    session of ``count`` copies, compaction events made by those of them that kept the figure
    of what the log does not show (added to a messages-only "after"), and the compactions
    after the last."""
    lines = copies(COMPACTED[0], count)
    path = tmp_path / f"session-{count}.jsonl"
    path.write_bytes(b"".join(lines[: len(lines) - APPENDS]))
    live = LiveSession(path)
    live.poll()
    live.view()
    copied = [0, 0]
    real = sample._compaction

    def counted(item: Compaction, window: int | None) -> Compaction:
        copied[0] += 1
        return real(item, window)

    def event(kind: str, *args: Any) -> Event:
        copied[1] += kind == "compaction"
        return Event(kind, *args)

    with monkeypatch.context() as patched:
        patched.setattr(sample, "_compaction", counted)
        patched.setattr(session, "Event", event)
        events, outside = 0, None
        for line in lines[len(lines) - APPENDS :]:
            with path.open("ab") as handle:
                handle.write(line)
            live.poll()
            made = copied[1]
            view = live.figures()
            assert view is not None
            now = outside_log(view.analysis, earlier=live.outside_log)
            if now == outside:
                events += copied[1] - made
            outside = now
    copied[1] = events
    view = live.view()
    assert view is not None
    return [*copied, len(view.sample.compactions)]


def test_samples_do_not_copy_every_compaction_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = copied_per_update(tmp_path, 10, monkeypatch)
    big = copied_per_update(tmp_path, 40, monkeypatch)
    assert small[2] == 10 and big[2] == 40  # every compaction is still in the sample
    assert 0 < small[0] == big[0] <= 2 * APPENDS
    assert 0 < small[1] == big[1] <= 2 * APPENDS


def test_a_compaction_completed_later_is_copied_again(tmp_path: Path) -> None:
    """A reader may complete the newest compaction after it arrived (Codex: its "after" is
    the next request's prompt): the next sample shows it completed, the one before unchanged."""
    state = SessionState(agent="codex", path=tmp_path / "s.jsonl")
    first = Compaction("auto", pre_tokens=100, line=3)
    state.compactions.append(first)
    ledger = Ledger()
    before = ledger.copies(state, "compactions", state.compactions, dataclasses.replace)
    first.post_tokens = 40
    second = Compaction("auto", pre_tokens=90, line=9)
    state.compactions.append(second)
    after = ledger.copies(state, "compactions", state.compactions, dataclasses.replace)
    assert before[0].post_tokens is None
    assert [c.post_tokens for c in after] == [40, None]
    assert after[0] is not first and after[1] is not second

"""What a live session keeps lives as long as the session: following one session after another
(as the sessions table and the dashboard do, for hours) grows no module-level dict, list, set or
``functools`` cache, and two sessions of the same file in one process decide their figures each
on its own."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

from session_copies import COMPACTED, copies

from ctxtop.engine.analysis.profiles import load_profile
from ctxtop.engine.config import Thresholds
from ctxtop.engine.live.session import LiveSession, build_view
from ctxtop.engine.sessions.sample import build_sample


def module_sizes() -> dict[str, int]:
    """The size of every dict, list and set, and of every ``functools`` cache, held by a
    module of ctxtop's."""
    sizes = {}
    for module_name, module in list(sys.modules.items()):
        if module is None or module_name.split(".")[0] not in ("engine", "tui"):
            continue
        for name, value in list(vars(module).items()):
            if name.startswith("__"):
                continue
            key = f"{module_name}.{name}"
            if isinstance(value, (dict, list, set)):
                sizes[key] = len(value)
            elif isinstance(value, functools._lru_cache_wrapper):
                sizes[key] = value.cache_info().currsize
    return sizes


def follow(path: Path) -> LiveSession:
    live = LiveSession(path)
    live.poll()
    assert live.view() is not None
    return live


def test_following_more_sessions_grows_no_module_state(tmp_path: Path) -> None:
    sessions = []
    for number, repeats in enumerate((5, 5, 2, 3)):
        path = tmp_path / f"session-{number}.jsonl"
        path.write_bytes(b"".join(copies(COMPACTED[number % 2], repeats)))
        sessions.append(path)
    # The first two load what every session shares (profiles, tokenizers and their counters).
    follow(sessions[0])
    follow(sessions[1])
    before = module_sizes()
    kept = [follow(path) for path in sessions[2:]]
    grown = {
        name: (before.get(name, 0), size)
        for name, size in module_sizes().items()
        if size > before.get(name, 0)
    }
    assert len(kept) == 2 and grown == {}


def test_two_views_of_one_session_decide_their_compactions_each(tmp_path: Path) -> None:
    """A compaction's "after" counts only the messages: the figure of what the log does not
    show is added, as each view has it. Another session of the same file decided its own."""
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(copies(COMPACTED[0], 3)))
    sample = build_sample(follow(path).reader.adapter)
    settled = [item for item in sample.compactions[:-1] if item.post_tokens is not None]
    assert settled
    outside = 10 * max(item.post_tokens or 0 for item in settled)
    small = build_view(sample, Thresholds(), outside=outside)
    large = build_view(sample, Thresholds(), outside=outside + 10)
    shown = [
        [item.after_tokens for item in view.sample.compactions[:-1]] for view in (small, large)
    ]
    assert shown[1] == [after + 10 if after else after for after in shown[0]] != shown[0]


def test_a_profile_edited_while_running_is_reread_and_kept_once(isolated_dirs: Path) -> None:
    """Each edit of a user's profile is used from the next update on; the versions before it
    are not kept."""
    folder = isolated_dirs / "config" / "profiles"
    folder.mkdir(parents=True)
    profile = folder / "claude-code.yaml"
    reserves = []
    for edit in range(4):
        profile.write_text(
            f"name: claude-code\noutput_reserve: {1000 + edit}\nautocompact: none\n"
            "sections:\n  - {name: everything, content: messages}\n"
        )
        os.utime(profile, ns=(edit * 10**9, edit * 10**9))  # a new time whatever the clock
        reserves.append(load_profile("claude-code").output_reserve)
        if edit == 1:
            before = module_sizes()
    assert reserves == [1000, 1001, 1002, 1003]
    assert {name for name, size in module_sizes().items() if size > before.get(name, 0)} == set()

"""Which session the dashboard follows, and what it says of a path that cannot be one: the
newest real session, past newer junk of a session's name; a device, a named pipe or a
directory named as what it is (it said "no such session file")."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import pytest
from cli_run import SAMPLES, Ended

from ctxtop.engine.live import locate
from ctxtop.engine.live.locate import newest_sessions
from ctxtop.tui.cli import main


def _dashboard(*argv: str) -> Ended:
    """``ctxtop ARGV`` as the script runs it (no sub-command: the dashboard)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return Ended(code, out.getvalue(), err.getvalue())


def test_junk_newest_jsonl_is_skipped_for_the_newest_real_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "claude/projects/-work-demo"
    project.mkdir(parents=True)
    real = project / "1af70000-0000-4000-8000-000000000001.jsonl"
    real.write_bytes(SAMPLES["claude-code"].read_bytes())
    junk = project / "2bf70000-0000-4000-8000-000000000002.jsonl"
    junk.write_bytes(os.urandom(300_000))  # newer, and no session at all
    newer_junk = project / "3cf70000-0000-4000-8000-000000000003.jsonl"
    newer_junk.write_text('{"not": "a session"}\n' * 50)
    for age, path in enumerate((newer_junk, junk, real)):
        os.utime(path, (1_700_000_000 - age * 60, 1_700_000_000 - age * 60))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    assert newest_sessions("claude-code")[0] == real
    assert locate.newest_sessions("claude-code") == (real, [newer_junk, junk])


@pytest.mark.parametrize(
    ("kind", "said"),
    [("device", "a device"), ("fifo", "a named pipe"), ("directory", "a directory")],
)
def test_the_dashboard_says_what_a_path_that_is_no_session_is(
    tmp_path: Path, kind: str, said: str
) -> None:
    path = {"device": Path("/dev/zero"), "directory": tmp_path}.get(kind, tmp_path / "pipe")
    if kind == "fifo":
        os.mkfifo(path)
    ended = _dashboard(str(path))
    assert ended.code == 2
    assert (
        ended.err
        == f"ctxtop: {path}: {said}, not a session file (name a session's .jsonl or .json file)\n"
    )


def test_the_dashboard_says_it_passed_over_newer_junk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Following the newest session past newer files that are none: the screen says so, once,
    naming them, and shows the real session."""
    import asyncio

    from ctxtop.tui.app import CtxtopApp

    project = tmp_path / "claude/projects/-work-demo"
    project.mkdir(parents=True)
    real = project / "1af70000-0000-4000-8000-000000000001.jsonl"
    real.write_bytes(SAMPLES["claude-code"].read_bytes())
    junk = project / "2bf70000-0000-4000-8000-000000000002.jsonl"
    junk.write_text('{"not": "a session"}\n' * 50)
    os.utime(real, (1_700_000_000, 1_700_000_000))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))

    async def run() -> list[str]:
        app = CtxtopApp(real, follow_newest=True, agent="claude-code", newer_check=0.2)
        async with app.run_test(size=(100, 30)) as pilot:
            for _ in range(300):
                await pilot.pause(0.02)
                if any(n.title == "Skipped newer files" for n in app._notifications):
                    break
            await pilot.pause(0.5)  # more checks: still said once
            assert app.path == real
            return [n.message for n in app._notifications if n.title == "Skipped newer files"]

    said = asyncio.run(run())
    assert len(said) == 1 and junk.name in said[0] and "not a session" in said[0]

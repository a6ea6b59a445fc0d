"""After the session file is deleted, made unreadable or truncated, the dashboard says so and
marks its figures stale (they were LIVE with no sign); when data arrives again it is LIVE."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

from cli_run import SAMPLES

from ctxtop.tui.app import CtxtopApp


def header_text(app: CtxtopApp) -> str:
    return " ".join(str(part) for part in app.header.parts())


async def wait_for(pilot: object, predicate: object, limit: float = 30) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not predicate():  # type: ignore[operator]
        if loop.time() > deadline:
            raise AssertionError("the dashboard never reached the expected state")
        await pilot.pause(0.05)  # type: ignore[attr-defined]


def test_deleted_unreadable_and_truncated_files_are_said_and_figures_marked(
    tmp_path: Path,
) -> None:
    session = tmp_path / SAMPLES["claude-code"].name
    shutil.copyfile(SAMPLES["claude-code"], session)
    lines = session.read_bytes()

    async def run() -> None:
        app = CtxtopApp(session, use_watchfiles=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.view is not None)
            assert "LIVE" in header_text(app) and "STALE" not in header_text(app)
            session.unlink()
            await wait_for(pilot, lambda: "STALE file gone" in header_text(app))
            assert app.has_class("stale") and "file gone" in str(app.status.render())
            session.mkdir()  # a directory of the session's name: cannot be read as a file
            await wait_for(pilot, lambda: "file unreadable" in header_text(app))
            session.rmdir()
            session.write_bytes(b"")  # truncated to nothing
            await wait_for(pilot, lambda: "truncated: waiting" in header_text(app))
            session.write_bytes(lines)  # the agent writes again
            await wait_for(pilot, lambda: "STALE" not in header_text(app))
            assert not app.has_class("stale") and "LIVE" in header_text(app)

    asyncio.run(run())
    os.sync()

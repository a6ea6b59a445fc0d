"""The demo replays its sample as if live: each record is written with the time it is written,
so the cache clock and the last-write figures read as for a session running now (they read the
day the sample was recorded: "cache cold since Nov 22 15:04" on the demo's first screen)."""

from __future__ import annotations

import re
import time
from pathlib import Path

from ctxtop.engine.agents.session_reader import SessionReader
from ctxtop.engine.live.demo import DemoReplay, demo_lines
from ctxtop.engine.sessions.cache_clock import cache_clock
from ctxtop.engine.sessions.sample import build_sample

RECORD_TIME = re.compile(rb'"timestamp":"([^"]*)"')


def test_the_demo_writes_its_records_at_the_time_it_writes_them(tmp_path: Path) -> None:
    target = tmp_path / "session.jsonl"
    replay = DemoReplay(target)
    started = time.time()
    while not replay.finished:
        replay.step()
    written = target.read_bytes()
    original = b"".join(demo_lines())
    # The same records, times apart, byte for byte (a record time keeps its shape).
    assert RECORD_TIME.sub(b"", written) == RECORD_TIME.sub(b"", original)
    assert len(written) == len(original)
    stamps = RECORD_TIME.findall(written)
    assert len(stamps) == len(RECORD_TIME.findall(original)) > 0
    assert all(
        stamp.startswith(time.strftime("%Y-", time.gmtime(started)).encode()) for stamp in stamps
    )
    reader = SessionReader(target)
    reader.poll()
    assert reader.adapter is not None
    warm = build_sample(reader.adapter).cache_prefix
    assert warm is not None and started - 1 <= warm.used_at <= time.time() + 1
    clock = cache_clock(warm, time.time())
    assert clock is not None and clock.warm and clock.seconds_left > 3000  # 1-hour writes

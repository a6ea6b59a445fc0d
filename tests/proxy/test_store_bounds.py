"""The proxy's measurements stay bounded whatever session ids the requests carry (any local
client writes them): a bounded number of files, a bounded total, each file bounded keeping its
newest lines; the directory readable by its owner only (its file names are session ids). 3,000
made-up ids used to make 3,000 files in 3 s, in a 0755 directory."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from measurement_lines import read_measurements
from proxy_upstream import proxy_to, upstream
from test_forwarding import anthropic_body, post

from ctxtop.engine.proxy import store
from ctxtop.engine.proxy.store import (
    MAX_FILES,
    append_measurement,
    measurement_path,
    measurements_dir,
)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def sizes() -> dict[str, int]:
    return {path.name: path.stat().st_size for path in measurements_dir().iterdir()}


def line(n: int, pad: int = 0) -> dict[str, object]:
    return {"n": n, "pad": "x" * pad}


def test_made_up_session_ids_through_the_proxy_keep_a_bounded_private_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(store, "MAX_FILES", 30)
    ids = [f"made-up-{n}" for n in range(80)]
    with upstream() as up, proxy_to(up.url) as proxy:
        for made_up in ids:
            headers = {"x-claude-code-session-id": made_up}
            assert post(proxy.port, "/v1/messages", anthropic_body(), headers)[0] == 200
    names = set(sizes())
    assert len(names) <= 30
    assert f"{ids[-1]}.jsonl" in names and f"{ids[0]}.jsonl" not in names  # oldest go first
    assert mode(measurements_dir()) == 0o700
    assert {mode(path) for path in measurements_dir().iterdir()} == {0o600}


def test_a_flood_of_sessions_stays_under_the_file_bound() -> None:
    for n in range(MAX_FILES + MAX_FILES // 5):
        append_measurement(f"s{n}", line(n))
    assert len(sizes()) <= MAX_FILES
    assert read_measurements(f"s{MAX_FILES + MAX_FILES // 5 - 1}") != []


def test_the_total_size_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "MAX_TOTAL_BYTES", 200 * 1024)
    for session in range(30):
        for n in range(20):
            append_measurement(f"s{session}", line(n, pad=1000))
    assert sum(sizes().values()) <= 200 * 1024
    assert len(read_measurements("s29")) == 20  # the newest session whole


def test_a_long_session_keeps_its_newest_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "MAX_FILE_BYTES", 64 * 1024)
    for n in range(300):
        append_measurement("long", line(n, pad=1000))
    assert measurement_path("long").stat().st_size <= 64 * 1024
    kept = [value["n"] for value in read_measurements("long")]
    assert kept[-1] == 299 and kept == list(range(kept[0], 300))  # whole lines, newest kept


def test_an_older_open_directory_is_narrowed() -> None:
    measurements_dir().mkdir(parents=True, mode=0o755)
    measurements_dir().chmod(0o755)
    append_measurement("s", line(1))
    assert mode(measurements_dir()) == 0o700

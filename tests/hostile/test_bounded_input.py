"""Every command reads a bounded input: devices, named pipes and directories are refused in
one line (no endless read, no wait for a writer), inputs over the limit are refused, deep
nesting is a one-line error, a bad URL in the settings is named, and a results directory that
cannot be one is said so. Children run with 1 GB of address space: an unbounded read ends
there (a MemoryError traceback) instead of filling the machine."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_run import Ended, assert_clean_end, run_cli, run_offload_edit, run_subprocess
from test_secrets import _leaky_session

MEMORY = 1 << 30
DEEP = "[" * 100_000 + "]" * 100_000


def _refused(ended: Ended, name: str) -> None:
    assert ended.code == 2, ended
    assert ended.err.splitlines() == [ended.err.strip()], ended.err
    assert ended.err.startswith((f"ctxtop: {name}: ", f"ctxtop: {name}:1: ")), ended.err
    assert "Traceback" not in ended.err


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    yield path


@pytest.mark.parametrize(
    "argv", [("count",), ("count", "--messages"), ("render",), ("render", "--json")]
)
def test_a_device_a_fifo_and_a_directory_are_refused(
    argv: tuple[str, ...], fifo: Path, tmp_path: Path
) -> None:
    for path in ("/dev/zero", str(fifo), str(tmp_path)):
        ended = run_subprocess(*argv, path, timeout=60, memory_limit=MEMORY)
        _refused(ended, path)
        assert "not a regular file" in ended.err


@pytest.mark.parametrize(
    "argv", [("count",), ("count", "-", "--messages"), ("render", "--jsonl"), ("statusline",)]
)
def test_endless_stdin_is_refused_at_the_limit(argv: tuple[str, ...]) -> None:
    ended = run_subprocess(*argv, stdin="/dev/zero", timeout=60, memory_limit=MEMORY)
    _refused(ended, "stdin")
    assert "the input limit" in ended.err


def test_the_limit_is_documented_and_can_be_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("word " * 300_000)  # 1.5 MB
    monkeypatch.setenv("CTXTOP_MAX_INPUT_MB", "1")
    ended = run_cli("count", str(text))
    _refused(ended, str(text))
    assert "over 1 MB, the input limit (CTXTOP_MAX_INPUT_MB raises it)" in ended.err
    monkeypatch.setenv("CTXTOP_MAX_INPUT_MB", "2")
    assert run_cli("count", str(text)).out.startswith("300001 tokens")
    readme = (Path(__file__).parents[2] / "README.md").read_text("utf-8")
    assert "CTXTOP_MAX_INPUT_MB" in readme and "64 MB" in readme


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (("count", "--messages"), "deep.json"),
        (("render",), "deep.json"),
    ],
)
def test_deep_nesting_is_one_line(argv: tuple[str, ...], name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_text(DEEP)
    ended = run_cli(*argv, str(path))
    _refused(ended, str(path))
    assert "nested too deeply" in ended.err


def test_deep_status_json_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "status.json"
    path.write_text(DEEP)
    ended = run_subprocess("statusline", stdin=str(path), timeout=60)
    _refused(ended, "stdin")
    assert "nested too deeply" in ended.err


BAD_URLS = ["http://[::1", "http://127.0.0.1:99999/v1", "file:///etc/passwd", "https://"]


@pytest.mark.parametrize("url", BAD_URLS)
def test_a_bad_base_url_in_the_settings_file_is_named(url: str) -> None:
    from ctxtop.engine.config import config_path

    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"llm:\n  base_url: '{url}'\n  model: m\n")
    ended = run_cli("config")
    _refused(ended, str(path))
    assert "llm.base_url" in ended.err and url in ended.err


@pytest.mark.parametrize("url", BAD_URLS)
def test_a_bad_base_url_in_the_environment_falls_back_with_a_warning(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXTOP_LLM_BASE_URL", url)
    monkeypatch.setenv("CTXTOP_LLM_MODEL", "m")
    session = _leaky_session(tmp_path)
    ended = run_cli("compact", str(session), "--summarizer", "llm", "--dry-run", "--json")
    assert ended.code == 0, ended.err
    [warning] = [w for w in json.loads(ended.out)["warnings"] if "LLM summary failed" in w]
    assert "base_url" in warning and url in warning


@pytest.mark.parametrize("results", ["/etc/passwd", "/proc/self", "a-file"])
def test_a_results_dir_that_cannot_hold_files_is_said_so(results: str, tmp_path: Path) -> None:
    session = _leaky_session(tmp_path)
    if results == "a-file":
        results = str(tmp_path / "a-file")
        Path(results).write_text("mine")
    before = sorted(tmp_path.iterdir())
    ended = run_offload_edit(session, Path(results), "200")
    assert_clean_end(ended, results)
    assert ended.code == 2 and "nothing was written" in ended.err
    assert sorted(tmp_path.iterdir()) == before

"""``ctxtop live`` on plan files it cannot use: a named pipe or a link to /dev/zero (it waited
forever on the pipe), a damaged plan (``figures.tokens_after: "lots"`` was a traceback), and a
plan whose text holds escape codes (printed raw): one line naming the file, terminal-safe text."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_run import run_subprocess

from ctxtop.engine.proxy.live_plan import VERSION, plan_path

SESSION = "4d2f9a10-7c3e-4b8a-9e61-0a1b2c3d4e5f"
ESCAPES = "\x1b]2;PWNED\x07\x1b[2J\u202e"


def plan(**changes: object) -> dict[str, object]:
    return {
        "version": VERSION,
        "kind": "edit",
        "session_id": SESSION,
        "agent": "claude-code",
        "source": "/home/u/.claude/projects/p/s.jsonl",
        "source_sha256": "",
        "created": "2026-11-28T23:00:00Z",
        "results": {"toolu_1": "[ctxtop: old tool result cleared]"},
        "inputs": {},
        "compact": None,
        "figures": {"tokens_before": 1200, "tokens_after": 800, "tokens_source": "estimated"},
        **changes,
    }


def write_plan(value: dict[str, object]) -> Path:
    path = plan_path(SESSION)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def assert_one_line_naming(err: str, path: Path, what: str) -> None:
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ctxtop: {path}: "), err
    assert what in lines[0]


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_plan_that_is_a_pipe_or_a_device_is_named_not_waited_on(kind: str) -> None:
    path = plan_path(SESSION)
    path.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    ended = run_subprocess("live", timeout=60, memory_limit=2 * 1024**3)
    assert ended.code == 2
    assert_one_line_naming(ended.err, path, "not a regular file")
    assert SESSION in ended.out and "not applied" in ended.out


def test_a_plan_with_a_figure_of_the_wrong_kind_is_one_line() -> None:
    figures = {"tokens_before": 1200, "tokens_after": "lots"}
    path = write_plan(plan(figures=figures))
    ended = run_subprocess("live", timeout=60)
    assert ended.code == 2
    assert_one_line_naming(ended.err, path, "figures.tokens_after must be a whole number")


def test_escape_codes_in_a_plan_are_shown_not_obeyed() -> None:
    write_plan(plan(created=f"2026-11-28{ESCAPES}"))
    ended = run_subprocess("live", timeout=60)
    assert ended.code == 0, ended.err
    assert not any(char in ended.out for char in "\x1b\x07\u202e"), repr(ended.out)
    assert "since 2026-11-28\\x1b]2;PWNED\\x07\\x1b[2J\\u202e" in ended.out

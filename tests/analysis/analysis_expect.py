"""Helpers for the analysis tests: run ``ctxtop report --json`` and count like a user would."""

from __future__ import annotations

import contextlib
import io
import json
import time
from pathlib import Path
from typing import Any

from ctxtop.engine.cli.main import main
from ctxtop.engine.live.view import LiveView
from ctxtop.engine.sessions.model import Message
from ctxtop.engine.tokens import get_encoding

ROOT = Path(__file__).resolve().parents[2]
CALC_MAIN = next((ROOT / "tests/sessions/data/generated/claude-code/calc-main").glob("*.jsonl"))
CODEX = next((ROOT / "sample_sessions/codex").rglob("rollout-*.jsonl"))
AGENT_LOOP = ROOT / "sample_sessions/openai-messages/agent-loop.jsonl"
ENC = get_encoding("o200k_base")


def run_report(*args: str) -> tuple[int, dict[str, Any] | None, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["report", *args])
    text = out.getvalue()
    return code, (json.loads(text) if code == 0 and "--json" in args else None), err.getvalue()


def check_clock(view: LiveView, cold: dict[str, Any]) -> None:
    """Takes the cache clock out of a cold report and checks that the dashboard's view gives the
    same one (these logs' caches are long cold: the seconds between the two reads change
    nothing)."""
    from ctxtop.engine.sessions.cache_clock import cache_clock

    cold_clock = cold.pop("cache_clock", None)
    clock = cache_clock(view.sample.cache_prefix, time.time(), view.sample.model)
    assert (clock.to_json() if clock is not None else None) == cold_clock


def report_json(path: Path, *options: str) -> dict[str, Any]:
    code, data, err = run_report(str(path), "--json", *options)
    assert code == 0, err
    assert data is not None
    return data


def before_compaction(path: Path, folder: Path) -> Path:
    """A copy of the session's log up to its first compaction (that line excluded): the
    requests before it are the live context there, which the cache simulation simulates (in
    the whole log they are history, taken from the log's own figures)."""
    from ctxtop.engine.agents.session_reader import read_session

    line = read_session(path).compactions[0].line
    copy = folder / path.name
    copy.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[: line - 1]))
    return copy


def count(messages: list[Message]) -> int:
    """The tokenizer count of messages' content (images: Claude Code's flat 2000)."""
    return sum(
        2000 if block.kind == "image" else ENC.count(block.content())
        for message in messages
        for block in message.blocks
    )


def section(analysis: dict[str, Any], name: str) -> dict[str, Any]:
    return next(item for item in analysis["sections"] if item["name"] == name)

"""Helpers for the agents' sample sessions: what the scripted loopback model answered in a
sample's run (its own record, ``--usage-log`` of realagents' fake_llm_server.py copied beside the
tests: one line per answered request with the OpenAI Chat Completions usage it reported and its
kind, ``main``, ``compact`` or ``side``), and a session read line by line as it is written."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.sessions.report_json import build_report

DATA = Path(__file__).parent / "data"


@dataclass(frozen=True)
class Answered:
    kind: str
    prompt: int  # the whole prompt, cached part included
    cached: int
    completion: int  # reasoning included


def answered(name: str) -> list[Answered]:
    rows: list[dict[str, Any]] = [
        json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines()
    ]
    return [
        Answered(
            row["kind"],
            row["usage"]["prompt_tokens"],
            row["usage"]["prompt_tokens_details"]["cached_tokens"],
            row["usage"]["completion_tokens"],
        )
        for row in rows
    ]


def totals(calls: list[Answered]) -> dict[str, int]:
    """The report's totals for these calls: input without the cached part, reasoning in output."""
    return {
        "input": sum(call.prompt - call.cached for call in calls),
        "output": sum(call.completion for call in calls),
        "cache_read": sum(call.cached for call in calls),
        "cache_write": 0,
    }


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def followed_and_fresh(session: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The report of ``session`` followed live as its lines are written one by one (from an
    empty file), and that of the finished file read at once."""
    lines = session.read_bytes().splitlines(keepends=True)
    session.write_bytes(b"")
    reader = SessionReader(session)
    for line in lines:
        with session.open("ab") as handle:
            handle.write(line)
        reader.poll()
    assert reader.adapter is not None
    fresh = SessionReader(session)
    read_all(fresh)
    assert fresh.adapter is not None
    return build_report(reader.adapter), build_report(fresh.adapter)

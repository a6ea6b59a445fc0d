"""One parser per format: every agent ctxtop forks has one typed record stream (its
``entries.entry``) that its session reader, its fork writer and its compaction source all
take, and a preview makes each line's entry once."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from ctxtop.engine.agents import AGENTS
from ctxtop.engine.agents.base import Agent
from ctxtop.engine.forks.transaction import EDITING, load
from ctxtop.engine.sessions.json_lines import session_records

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
FORKED = sorted(name for name, agent in AGENTS.items() if agent.can_edit)


def _sample(agent: str) -> Path | None:
    """The agent's biggest JSONL sample session (a main session, not a sub-agent's)."""
    found = [
        path
        for path in (SAMPLES / agent).rglob("*.jsonl")
        if not re.fullmatch(r"agent-[0-9a-f]+\.jsonl", path.name) and "subagents" not in path.parts
    ]
    return max(found, key=lambda path: path.stat().st_size) if found else None


def test_every_agent_ctxtop_forks_has_one_typed_stream() -> None:
    assert len(FORKED) >= 6
    for name in FORKED:
        agent = AGENTS[name]
        entry = agent.reader.entry
        assert entry is not None, f"{name}: its reader makes no typed entries"
        assert entry.__module__.endswith(".entries"), name
        writer = agent.writer
        source = agent.source
        assert writer is not None and writer.entry_of is entry, f"{name}: the writer's own parse"
        assert source is not None and source.writer_class is writer, name


@pytest.mark.parametrize("name", [n for n in FORKED if _sample(n) is not None])
def test_a_preview_makes_each_lines_entry_once(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    agent: Agent = AGENTS[name]
    path = _sample(name)
    assert path is not None
    made: list[int] = []
    entry = agent.reader.entry
    assert entry is not None

    def counting(record: Any, line: int) -> Any:
        made.append(line)
        return entry(record, line)

    writer_class, source_class = agent.writer, agent.source
    assert writer_class is not None and source_class is not None
    monkeypatch.setattr(agent.reader, "entry", staticmethod(counting))
    monkeypatch.setattr(writer_class, "entry_of", staticmethod(counting))

    loaded = load(path, EDITING)
    writer = loaded.writer(writer_class)
    scan = writer.scan()
    items = source_class(path, loaded.data, loaded.state, writer=writer).items()

    records = session_records(loaded.data)
    assert records is not None
    lines = [n for n, record in enumerate(records, 1) if type(record) is not bytes]
    assert sorted(made) == lines  # each decoded line once: reader, scan and items shared them
    assert scan.turns and items  # and they found the session's turns and context

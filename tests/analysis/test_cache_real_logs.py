"""The cache simulation against what the Anthropic API logged, on copies of public real Claude Code
sessions (2.1.39; tests/analysis/data/cache_real/PROVENANCE.md): one test per cause of a
disagreement that was fixed. Each case is picked from the raw log (gaps, TTLs, reads), never from
ctxtop's output, and the simulated read and write must be those the API logged (within 5 %)."""

from __future__ import annotations

import json
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import NamedTuple

from analysis_expect import ROOT

from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.analysis.analyze import Analyzer
from ctxtop.engine.analysis.profiles import load_profile
from ctxtop.engine.analysis.setup import setup_for
from ctxtop.engine.config import Thresholds
from ctxtop.engine.sessions.ledger import encoding_for

DATA = ROOT / "tests/analysis/data/cache_real/marot-spotter"


def simulated(path: Path, subagent: str | None = None) -> dict[int, tuple[int, int]]:
    """line -> (simulated read, write) of the main session's requests, or of a sub-agent's
    (with its parent and the other sub-agents on the same cache)."""
    reader = SessionReader(path)
    read_all(reader)
    assert reader.adapter is not None
    state = reader.adapter.snapshot()
    part = state if subagent is None else state.subagents[subagent]
    related = (
        [] if part is state else [state, *(s for s in state.subagents.values() if s is not part)]
    )
    profile = load_profile(reader.adapter.profile)
    setup = setup_for(part, reader.adapter.autocompact_at, profile, Thresholds())
    cache = Analyzer().analyze(part, setup, encoding_for(part), related=related).cache
    return {row.line: (row.read, row.write) for row in cache.requests}


class Logged(NamedTuple):
    """An API request of the main chain as the raw log has it (the first line of its response)."""

    line: int
    time: datetime
    read: int
    write: int
    long_lived: int  # the part of ``write`` written to live an hour
    model: str


def logged(path: Path, *, sidechain: bool = False) -> list[Logged]:
    found: list[Logged] = []
    seen: set[str] = set()
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        record = json.loads(text)
        message = record.get("message")
        if record.get("type") != "assistant" or bool(record.get("isSidechain")) != sidechain:
            continue
        usage = message.get("usage") if isinstance(message, dict) else None
        if not usage or message["id"] in seen:
            continue
        seen.add(message["id"])
        found.append(
            Logged(
                number,
                datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00")),
                usage["cache_read_input_tokens"],
                usage["cache_creation_input_tokens"],
                usage["cache_creation"]["ephemeral_1h_input_tokens"],
                message["model"],
            )
        )
    return found


def within(simulated: int, logged: int) -> bool:
    return abs(simulated - logged) <= 0.05 * logged


def test_a_prefix_written_for_an_hour_is_read_after_five_minutes() -> None:
    path = DATA / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"
    requests = logged(path)
    # The requests sent more than 5 minutes after the one before, which wrote for an hour.
    late = [
        after
        for before, after in pairwise(requests)
        if (after.time - before.time).total_seconds() > 300 and before.long_lived == before.write
    ]
    assert len(late) == 2  # lines 113 and 135 (7m09s and 7m42s after)
    rows = simulated(path)
    for request in late:
        # The API read all the request before left cached: nothing had expired.
        assert request.read > 60_000
        read, write = rows[request.line]
        assert within(read, request.read) and within(write, request.write)


def compaction_lines(path: Path) -> list[int]:
    return [
        number
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if json.loads(text).get("subtype") == "compact_boundary"
    ]


def test_the_system_prompt_and_tools_stay_cached_across_a_compaction() -> None:
    path = DATA / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    [compaction] = compaction_lines(path)
    requests = logged(path)
    before = [r for r in requests if r.line < compaction]
    # A read short of what the request before left cached: the conversation was not found,
    # only the system prompt and tools before it.
    short = [
        after.read
        for previous, after in pairwise(before)
        if 0 < after.read < 0.95 * (previous.read + previous.write)
    ]
    assert short == [21_460]
    first_after = next(r for r in requests if r.line > compaction)
    assert first_after.read == short[-1]  # what the API read after the compaction
    read, write = simulated(path)[first_after.line]
    assert within(read, first_after.read) and within(write, first_after.write)


def test_a_request_to_another_model_reads_nothing_the_first_model_cached() -> None:
    # A skill ran on claude-haiku-4-5 in a claude-opus-4-6 session, 40 s after the last request.
    path = DATA / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    requests = logged(path)
    switches = [after for before, after in pairwise(requests) if after.model != before.model]
    assert [(r.line, r.model) for r in switches] == [(103, "claude-haiku-4-5-20251001")]
    [switch] = switches
    assert switch.read == 0
    rows = simulated(path)
    read, write = rows[switch.line]
    assert read == 0 and within(write, switch.write)
    # The next request, to the same model, reads what the switch wrote.
    following = requests[requests.index(switch) + 1]
    read, write = rows[following.line]
    assert within(read, following.read) and within(write, following.write)


def test_the_compaction_agent_reads_what_the_conversation_left_cached() -> None:
    # Claude Code 2.1's compaction runs as a sub-agent that sends the conversation first, then
    # asks for the summary: it found the whole prefix the session's last request left cached.
    path = DATA / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    [compaction] = compaction_lines(path)
    last = [r for r in logged(path) if r.line < compaction][-1]
    agent = path.with_suffix("") / "subagents" / "agent-acompact-fffbd0.jsonl"
    [summary] = logged(agent, sidechain=True)
    assert summary.time > last.time and summary.read == last.read + last.write
    read, write = simulated(path, "acompact-fffbd0")[summary.line]
    assert within(read, summary.read) and within(write, summary.write)

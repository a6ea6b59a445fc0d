"""Sub-agents share the prompt cache with their parent session and with each other."""

from __future__ import annotations

import json

from analysis_expect import ROOT

from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.analysis.analyze import Analyzer
from ctxtop.engine.analysis.profiles import load_profile
from ctxtop.engine.analysis.setup import setup_for
from ctxtop.engine.config import Thresholds
from ctxtop.engine.sessions.ledger import encoding_for
from ctxtop.engine.sessions.model import SessionState

LEGACY = ROOT / "tests/sessions/data/generated/claude-code/calc-legacy-2-0-77"


def first_requests() -> dict[str, tuple[str, str, int, int, int]]:
    """agent id -> (first message, first response time, prompt, logged read, logged write),
    read from the raw sub-agent files."""
    found = {}
    for path in sorted(LEGACY.glob("agent-*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line]
        message = rows[0]["message"]["content"]
        answer = next(row for row in rows if row["type"] == "assistant")
        usage = answer["message"]["usage"]
        read, write = usage["cache_read_input_tokens"], usage["cache_creation_input_tokens"]
        prompt = usage["input_tokens"] + read + write
        found[rows[0]["agentId"]] = (message, answer["timestamp"], prompt, read, write)
    return found


def simulated_first_requests() -> dict[str, tuple[int, int]]:
    reader = SessionReader(next(LEGACY.glob("b8dbf70f-*.jsonl")))
    read_all(reader)
    assert reader.adapter is not None
    state = reader.adapter.snapshot()
    profile = load_profile("claude-code")
    found = {}
    for agent, part in state.subagents.items():
        others: list[SessionState] = [state]
        others += [other for other in state.subagents.values() if other is not part]
        setup = setup_for(part, reader.adapter.autocompact_at, profile, Thresholds())
        cache = Analyzer().analyze(part, setup, encoding_for(part), related=others).cache
        found[agent] = (cache.requests[0].read, cache.requests[0].write)
    return found


def test_a_sub_agent_reads_the_first_prompt_an_earlier_one_sent_identically() -> None:
    # Claude Code 2.0.77 starts "Warmup" sub-agents in every process; a process whose system
    # prompt and tools did not change sends the very prompts of the process before.
    logged = first_requests()
    simulated = simulated_first_requests()
    repeated = 0
    for agent, (message, time, prompt, read, write) in logged.items():
        earlier = any(
            (other_message, other_prompt) == (message, prompt) and other_time < time
            for other_message, other_time, other_prompt, _, _ in logged.values()
        )
        if earlier:
            repeated += 1
            # The model server caches whole prompts: the whole prompt is read, nothing written.
            assert simulated[agent] == (read, write) == (prompt, 0)
        else:
            assert simulated[agent][0] == read == 0
    assert repeated == 3


def test_the_same_analyzer_sees_what_the_other_conversations_log_later() -> None:
    reader = SessionReader(next(LEGACY.glob("b8dbf70f-*.jsonl")))
    read_all(reader)
    assert reader.adapter is not None
    state = reader.adapter.snapshot()
    warmup, earlier = state.subagents["a10e125"], state.subagents["a293118"]
    setup = setup_for(
        warmup, reader.adapter.autocompact_at, load_profile("claude-code"), Thresholds()
    )
    analyzer = Analyzer()

    def first_read(related: list[SessionState]) -> int:
        cache = analyzer.analyze(warmup, setup, encoding_for(warmup), related=related).cache
        return cache.requests[0].read

    prompt = next(iter(warmup.responses.values())).usage.input_tokens_total
    assert first_read([state]) == 0
    assert first_read([state, earlier]) == prompt
    # The earlier warmup's usage is revised in place (a live log rewrites a response): it
    # cached nothing after all, and the same analyzer no longer reads it.
    usage = next(iter(earlier.responses.values())).usage
    earlier.totals.add(usage, -1)
    usage.input_tokens += usage.cache_write_tokens
    usage.cache_write_tokens = 0
    earlier.totals.add(usage)
    assert first_read([state, earlier]) == 0

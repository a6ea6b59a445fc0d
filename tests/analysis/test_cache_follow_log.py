"""The breakpoint cache simulation predicts each request from what the log says the previous
one left cached, and learns from the log's reads whether the endpoint caches up to the last
breakpoint (Anthropic) or the whole prompt it was sent."""

from __future__ import annotations

from dataclasses import replace

from ctxtop.engine.analysis.cache_sim import (
    Boundary,
    CacheSimulator,
    RequestShape,
    SharedEvidence,
    epoch_seconds,
)

TAIL = 6  # uncached tokens after the last breakpoint on every request


def shapes(prompts: list[int], reads: list[int], writes: list[int]) -> list[RequestShape]:
    return [
        RequestShape(
            response_id=f"r{i}",
            line=i + 1,
            timestamp=None,
            prompt=prompt,
            output=10,
            boundaries=(Boundary(f"m{i}", prompt, True),) if i == 0 else (
                Boundary(f"m{i - 1}", prompts[i - 1], True), Boundary(f"m{i}", prompt, True)
            ),
            logged_read=read,
            logged_write=write,
            logged_uncached=prompt - read - write,
        )
        for i, (prompt, read, write) in enumerate(zip(prompts, reads, writes, strict=True))
    ]  # fmt: skip


def simulate(rows: list[RequestShape], *, follow_log: bool = True) -> list[tuple[int, int]]:
    simulator = CacheSimulator(
        "breakpoints", ttl_seconds=300, granularity=1, min_cacheable=1024, prices=None,
        follow_log=follow_log,
    )  # fmt: skip
    return [(row.read, row.write) for row in simulator.run(rows).requests]


PROMPTS = [5000, 5300, 5700, 6000, 6400]


def anthropic_figures() -> tuple[list[int], list[int]]:
    """Logged reads and writes of PROMPTS when each request reads the previous read + write."""
    reads = [0]
    writes = [PROMPTS[0] - TAIL]
    for prompt in PROMPTS[1:]:
        reads.append(reads[-1] + writes[-1])
        writes.append(prompt - reads[-1] - TAIL)
    return reads, writes


def test_anthropic_reads_up_to_the_previous_breakpoint() -> None:
    reads, writes = anthropic_figures()
    predicted = simulate(shapes(PROMPTS, reads, writes))
    assert [read for read, _ in predicted[2:]] == reads[2:]
    assert [write for _, write in predicted[2:]] == writes[2:]


def test_an_endpoint_that_caches_the_whole_prompt_is_learnt_from_its_reads() -> None:
    reads = [0, *PROMPTS[:-1]]  # each read is the whole previous prompt, tail included
    writes = [PROMPTS[0] - TAIL] + [
        p - r - TAIL for p, r in zip(PROMPTS[1:], reads[1:], strict=True)
    ]
    predicted = simulate(shapes(PROMPTS, reads, writes))
    # One read shows the rule; from then on each read is predicted exactly.
    assert [read for read, _ in predicted[3:]] == reads[3:]
    assert [write for _, write in predicted[3:]] == writes[3:]
    # Without following the log, the simulation keeps the breakpoint rule and is off by the tail
    # on every read.
    open_loop = simulate(shapes(PROMPTS, reads, writes), follow_log=False)
    assert all(read < logged for (read, _), logged in zip(open_loop[3:], reads[3:], strict=True))


def test_a_cache_reset_in_the_log_does_not_carry_over() -> None:
    reads = [0, 4994, 0, 5994, 6000 - TAIL + 0]
    writes = [4994, 300, 5994, 0, 0]
    prompts = [5000, 5300, 6000, 6000, 6400]
    writes[4] = prompts[4] - reads[4] - TAIL
    predicted = simulate(shapes(prompts, reads, writes))
    # The reset at the third request is not foreseen, but the request after it is predicted from
    # what the log says it left cached (its write), not from the stale entry.
    assert predicted[2][0] > 0 and reads[2] == 0
    assert predicted[3][0] == reads[3]


def test_the_tail_is_learnt_from_a_first_request_that_only_wrote() -> None:
    # The first request reads nothing but its uncached input is already the closing framing
    # after the breakpoint: the second request's write is predicted without it.
    prompts = [5000, 5100]
    reads = [0, 5000 - TAIL]
    writes = [5000 - TAIL, 5100 - (5000 - TAIL) - TAIL]
    predicted = simulate(shapes(prompts, reads, writes))
    assert predicted[1] == (reads[1], writes[1])


def with_unmarked(rows: list[RequestShape], index: int, tokens: int) -> list[RequestShape]:
    return [replace(row, unmarked=tokens) if i == index else row for i, row in enumerate(rows)]


def test_results_after_the_last_breakpoint_stay_uncached() -> None:
    reads, writes = anthropic_figures()
    # The fourth request's last 150 tokens followed its breakpoint (a tool result of an earlier
    # call that arrived before the marked one): the log shows them uncached.
    writes[3] -= 150
    reads[4] -= 150
    writes[4] += 150
    rows = shapes(PROMPTS, reads, writes)
    assert rows[3].logged_uncached == TAIL + 150
    predicted = simulate(with_unmarked(rows, 3, 150))
    assert predicted[3] == (reads[3], writes[3])
    assert predicted[4] == (reads[4], writes[4])
    # Without the shape saying so, the write is overestimated by the unmarked tokens.
    assert simulate(rows)[3][1] == writes[3] + 150


def test_an_endpoint_that_caches_the_whole_prompt_ignores_where_the_marker_is() -> None:
    reads = [0, *PROMPTS[:-1]]
    writes = [PROMPTS[0] - TAIL] + [
        p - r - TAIL for p, r in zip(PROMPTS[1:], reads[1:], strict=True)
    ]
    predicted = simulate(with_unmarked(shapes(PROMPTS, reads, writes), 4, 150))
    assert predicted[4] == (reads[4], writes[4])


def at(seconds: int) -> str:
    return f"2026-11-22T16:06:{seconds:02d}Z"


def timed(rows: list[RequestShape], start: int) -> list[RequestShape]:
    """Requests sent every 2 seconds from ``start``, each answered a second later."""
    return [
        replace(row, sent=at(start + 2 * i), timestamp=at(start + 2 * i + 1))
        for i, row in enumerate(rows)
    ]


def simulate_shared(
    rows: list[RequestShape], shared: list[SharedEvidence]
) -> list[tuple[int, int]]:
    simulator = CacheSimulator(
        "breakpoints", ttl_seconds=300, granularity=1, min_cacheable=1024, prices=None
    )
    return [(row.read, row.write) for row in simulator.run(rows, shared).requests]


def test_a_first_prompt_another_conversation_left_cached_is_read() -> None:
    # Another conversation (a sibling sub-agent) sent the same first prompt and logged it cached
    # up to its breakpoint at second 10; ours goes out at second 20 and reads it.
    first = shapes([5000], [0], [5000 - TAIL])[0]
    rows = timed([replace(first, boundaries=(Boundary("p", 5000, True),))], 20)
    logged = epoch_seconds(at(10)) or 0.0
    sibling = [
        SharedEvidence(logged, tail=TAIL),
        SharedEvidence(logged, entry=("p", 5000 - TAIL, 5000)),
    ]
    assert simulate_shared(rows, sibling) == [(5000 - TAIL, 0)]
    # Logged after ours went out (the two ran in parallel), it was not there to read.
    late = epoch_seconds(at(21)) or 0.0
    assert simulate_shared(rows, [replace(e, time=late) for e in sibling]) == [(0, 5000)]


def test_how_the_endpoint_caches_is_learnt_from_the_other_conversations() -> None:
    # The parent's reads showed the endpoint caching whole prompts before this conversation
    # started: its second request is predicted by that rule at once.
    reads = [0, PROMPTS[0]]
    writes = [PROMPTS[0] - TAIL, PROMPTS[1] - PROMPTS[0] - TAIL]
    rows = timed(shapes(PROMPTS[:2], reads, writes), 20)
    shared = [SharedEvidence(epoch_seconds(at(second)) or 0.0, vote=1) for second in (8, 10)]
    assert simulate_shared(rows, shared)[1] == (reads[1], writes[1])
    assert simulate_shared(rows, [])[1] != (reads[1], writes[1])


def test_no_breakpoint_lies_beyond_the_last_one() -> None:
    # A system prefix inferred from the first prompt takes in what the log does not show of it
    # (here all but 1 token): it cannot reach past the closing framing of the last breakpoint.
    first = shapes([5000], [0], [5000 - TAIL])[0]
    boundaries = (Boundary("system", 4999, True), Boundary("p", 5000, True))
    rows = timed([replace(first, boundaries=boundaries)], 20)
    logged = epoch_seconds(at(10)) or 0.0
    sibling = [
        SharedEvidence(logged, tail=TAIL),
        SharedEvidence(logged, entry=("p", 5000 - TAIL, 5000)),
    ]
    assert simulate_shared(rows, sibling) == [(5000 - TAIL, 0)]
    assert simulate_shared(rows, sibling[:1]) == [(0, 5000 - TAIL)]


def test_a_read_through_the_system_marker_keeps_the_system_prompt_cached() -> None:
    # Requests 4 minutes apart (TTL 5 minutes), each marking the end of the system prompt and
    # tools (4,000 tokens) and its last message; the last one's conversation changed, so only
    # the system prefix can be found: it was last written 12 minutes before, but every request
    # since read through its marker, which keeps it alive.
    system = Boundary("system", 4000, True)
    start = epoch_seconds("2026-01-01T00:00:00Z")
    assert start is not None
    prompts = [5000, 5300, 5700, 6000]
    rows = []
    for i, prompt in enumerate(prompts):
        ends = (Boundary(f"m{i - 1}", prompts[i - 1], True),) if 0 < i < 3 else ()
        rows.append(
            RequestShape(
                response_id=f"r{i}", line=i + 1,
                timestamp=f"2026-01-01T00:{4 * i:02d}:00Z", prompt=prompt, output=10,
                boundaries=(system, *ends, Boundary(f"m{i}", prompt, True)),
                logged_read=None, logged_write=None, logged_uncached=0,
            )
        )  # fmt: skip
    figures = simulate(rows, follow_log=False)
    assert [read for read, _ in figures] == [0, 5000, 5300, 4000]


def test_a_read_short_of_the_conversation_shows_how_far_the_system_prefix_reaches() -> None:
    # The system prompt and tools were estimated at 5,000 tokens; a request whose conversation
    # was not found read 3,000 (the API's figure for that prefix): the next request whose
    # conversation is not found reads those 3,000, not the estimate.
    system = Boundary("system", 5000, True)
    prompts = [9000, 9500, 10_000]
    reads = [0, 3000, 3000]
    writes = [prompt - read - TAIL for prompt, read in zip(prompts, reads, strict=True)]
    rows = [
        RequestShape(
            response_id=f"r{i}", line=i + 1, timestamp=f"2026-01-01T00:0{i}:00Z",
            prompt=prompt, output=10, boundaries=(system, Boundary(f"m{i}", prompt, True)),
            logged_read=reads[i], logged_write=writes[i], logged_uncached=TAIL,
            system_key="system",
        )
        for i, prompt in enumerate(prompts)
    ]  # fmt: skip
    figures = simulate(rows)
    assert figures[1][0] == 5000  # (the estimate, before the log showed otherwise)
    assert figures[2] == (reads[2], writes[2])

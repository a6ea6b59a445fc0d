"""The breakpoint cache simulation predicts each request from what the log says the previous
one left cached, and learns from the log's reads whether the endpoint caches up to the last
breakpoint (Anthropic) or the whole prompt it was sent."""

from __future__ import annotations

from engine.analysis.cache_sim import Boundary, CacheSimulator, RequestShape

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


def test_anthropic_reads_up_to_the_previous_breakpoint() -> None:
    reads = [0]
    writes = [PROMPTS[0] - TAIL]
    for prompt in PROMPTS[1:]:
        reads.append(reads[-1] + writes[-1])
        writes.append(prompt - reads[-1] - TAIL)
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

"""``claude --resume ID --fork-session`` writes a new session file that replays the parent's
context (the same uuids, the parent's responses) before the new turn: it reads like its parent.

Two real forks: 2.1.330 (the parent had compacted: the fork starts with the parent's compact
boundary, and the message the compaction preserved is copied with its usage zeroed and
``requestSessionId`` naming the parent) and 2.1.332 (no compaction: the parent's responses are
copied with their usage)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sessions_expect import claude_responses, records, report

ROOT = Path(__file__).resolve().parents[2]
CLI_2_1_330 = (
    Path(__file__).parent / "data" / "real" / "claude-code" / "generated-cli-2.1.330" / "projects"
)
CLI_2_1_332 = (
    ROOT / "sample_sessions" / "claude-code" / "projects" / "-home-dev-cce-projects-calc-fork"
)
FORKS = {
    "2.1.330": (
        CLI_2_1_330 / "-home-dev-demo-project" / "b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl",
        CLI_2_1_330 / "-home-dev-demo-project" / "76c4d859-136c-4229-b110-5a96b8b48c0c.jsonl",
    ),
    "2.1.332": (
        CLI_2_1_332 / "094e0cdb-c3f1-4079-bae2-c22a6095a2c4.jsonl",
        CLI_2_1_332 / "f544cb8b-346f-4f5e-9bf1-7ef9cfe5e616.jsonl",
    ),
}


def system(got: dict[str, Any]) -> dict[str, Any]:
    return next(s for s in got["analysis"]["sections"] if s["name"] == "system")


@pytest.fixture(scope="module", params=sorted(FORKS))
def fork(request: pytest.FixtureRequest) -> tuple[Path, Path]:
    return FORKS[request.param]


def test_the_fork_is_a_copy_of_its_parent(fork: tuple[Path, Path]) -> None:
    """(What the tests below rest on.) The fork's conversation lines replay the parent's uuids,
    under the fork's own session id."""
    parent, child = (records(path) for path in fork)
    parent_uuids = {row["uuid"] for row in parent if "uuid" in row}
    copied = [row for row in child if row.get("uuid") in parent_uuids]
    assert len(copied) > 10
    assert (
        {row["sessionId"] for row in copied} == {child[-1]["sessionId"]} != {parent[0]["sessionId"]}
    )


def test_a_fork_reads_like_its_parent(fork: tuple[Path, Path]) -> None:
    parent, child = (report(path) for path in fork)
    # The same system prompt and tools in the tokenizer's count (each session's section is that
    # times the factor its own requests teach).
    assert system(child)["provenance"] == system(parent)["provenance"]
    counted = [got["analysis"]["system_counted"] for got in (parent, child)]
    assert counted[0] == counted[1] > 5_000  # (it read 0 for the 2.1.330 fork)
    # The growth per request its forecast rests on is like the parent's (the fork's own turns
    # differ a little); it was 40 times the parent's, from a 0-token first request.
    growth = [got["analysis"]["forecast"]["growth_per_request"] for got in (parent, child)]
    assert growth[0] / 1.5 <= growth[1] <= growth[0] * 1.5
    for got in (parent, child):
        assert abs(got["analysis"]["residual_tokens"]) <= 0.1 * got["context_tokens"]["value"]


def test_a_copy_with_its_usage_zeroed_is_no_request(fork: tuple[Path, Path]) -> None:
    """Each message id with usage is one request; the fork's zeroed copies of the parent's
    responses are none (counted, the first request on the context was 0 tokens)."""
    child = records(fork[1])
    got = report(fork[1])
    responses = claude_responses(child)
    assert got["api_requests"] == len(responses)
    zeroed = [
        row
        for row in child
        if row.get("type") == "assistant"
        and row.get("requestSessionId") not in (None, row["sessionId"])
        and not any(row["message"]["usage"].get(key) for key in ("input_tokens", "output_tokens"))
    ]
    assert bool(zeroed) == (fork is FORKS["2.1.330"])
    assert all(row["message"]["id"] not in responses for row in zeroed)

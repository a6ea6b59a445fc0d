"""The proxy's memory of token counts is bounded: a request bigger than the memory is still
measured whole, with the same figures as when everything fits."""

from __future__ import annotations

from ctxtop.engine.proxy.composition import measure
from ctxtop.engine.proxy.tally import TextCounts


def body(turns: int) -> dict[str, object]:
    return {
        "system": [{"type": "text", "text": "You are an agent. " * 50}],
        "tools": [{"name": "Bash", "input_schema": {"type": "object"}, "description": "run"}],
        "messages": [
            {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " * (10 + i)}
            for i in range(turns)
        ],
    }


def test_a_request_larger_than_the_memory_is_measured_the_same() -> None:
    roomy = measure("anthropic", body(40))
    counts = TextCounts(limit=200)  # a few texts: most are dropped again
    tight = [measure("anthropic", body(40), counts) for _ in range(2)]
    assert tight[0] == tight[1] == roomy
    assert counts.chars <= 200 or len(counts.counts) == 1

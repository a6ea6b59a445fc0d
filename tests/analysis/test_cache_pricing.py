"""Each request of the cache simulation is priced at the prices of the model that answered it:
a session that changes model mid-way keeps its simulation (nothing simulated again) and prices
the requests before the change at the old model's prices."""

from __future__ import annotations

from pathlib import Path

from analysis_expect import CALC_MAIN

from ctxtop.engine.agents.session_reader import SessionReader
from ctxtop.engine.analysis.analyze import Analyzer
from ctxtop.engine.analysis.cache_sim import CacheSimulator
from ctxtop.engine.analysis.report import analyze_session
from ctxtop.engine.models.registry import lookup

OLD, NEW = "claude-opus-4-8", "claude-sonnet-4-5"


def test_a_model_change_keeps_the_simulation_and_prices_each_request_by_its_model(
    tmp_path: Path,
) -> None:
    lines = CALC_MAIN.read_bytes().splitlines(keepends=True)
    cut = 89  # after the compaction (line 71) and the first request after it (line 88)
    path = tmp_path / CALC_MAIN.name
    path.write_bytes(b"".join(lines[:cut]))
    reader = SessionReader(path)
    reader.poll()
    assert reader.adapter is not None
    analyzer = Analyzer()
    before = analyze_session(reader.adapter, analyzer=analyzer).cache
    simulator = analyzer._simulator
    assert isinstance(simulator, CacheSimulator) and before.requests
    simulated = [0]
    real = simulator._simulate

    def counted(*args: object) -> object:
        simulated[0] += 1
        return real(*args)  # type: ignore[arg-type]

    simulator._simulate = counted  # type: ignore[method-assign]
    with path.open("ab") as handle:
        handle.write(b"".join(lines[cut:]).replace(OLD.encode(), NEW.encode()))
    reader.poll()
    after = analyze_session(reader.adapter, analyzer=analyzer).cache
    assert analyzer._simulator is simulator
    assert reader.adapter.snapshot().model == NEW
    # Only the requests after the change (and the newest before it, which the log may revise).
    assert simulated[0] <= len(after.requests) - len(before.requests) + 1
    responses = reader.adapter.snapshot().responses
    by_line = {response.line: response for response in responses.values()}
    models = set()
    for row in after.requests:
        response = by_line[row.line]
        models.add(response.model)
        prices = lookup(response.model).prices
        assert prices is not None
        expected = prices.cost(
            input_tokens=row.uncached,
            cache_write_tokens=row.write,
            cache_read_tokens=row.read,
            output_tokens=response.usage.output_tokens,
        )
        assert row.cost == round(expected, 6)
    assert models == {OLD, NEW}
    assert lookup(OLD).prices != lookup(NEW).prices


# Claude Code 2.1.330 (the demo's sample): every cache write of it lives an hour.
ONE_HOUR = (
    Path(__file__).resolve().parents[2]
    / "sample_sessions/claude-code/projects/-home-dev-demo-project"
    / "b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl"
)


def test_writes_that_live_an_hour_cost_the_hours_price() -> None:
    """The logged and the simulated cost of a request whose writes live an hour price them at
    the 1-hour cache-write price (2x input for Anthropic, not the 5-minute 1.25x)."""
    reader = SessionReader(ONE_HOUR)
    reader.poll()
    assert reader.adapter is not None
    cache = analyze_session(reader.adapter).cache
    by_line = {r.line: r for r in reader.adapter.snapshot().responses.values()}
    priced = 0
    for row in cache.requests:
        usage = by_line[row.line].usage
        if not usage.cache_write_tokens:
            continue
        assert usage.cache_write_1h_tokens == usage.cache_write_tokens
        prices = lookup(by_line[row.line].model).prices
        assert prices is not None and prices.cache_write_1h > prices.cache_write_5m
        logged = prices.cost(
            input_tokens=usage.input_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            output_tokens=usage.output_tokens,
            cache_ttl_1h=True,
        )
        assert row.logged_cost == round(logged, 6)
        simulated = prices.cost(
            input_tokens=row.uncached,
            cache_write_tokens=row.write,
            cache_read_tokens=row.read,
            output_tokens=usage.output_tokens,
            cache_ttl_1h=True,
        )
        assert row.cost == round(simulated, 6)
        priced += 1
    assert priced >= 2

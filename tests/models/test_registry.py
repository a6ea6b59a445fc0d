"""The registry answers for current models, honours a user file, and never crashes on unknowns."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.errors import CtxtopError
from engine.models.registry import load_registry


@pytest.mark.parametrize(
    ("model", "provider", "window", "input_price"),
    [
        ("claude-sonnet-4-5-20250929", "anthropic", 200_000, 3.0),
        ("claude-sonnet-4-5-20250929[1m]", "anthropic", 1_000_000, 3.0),
        ("claude-opus-4-1-20250805", "anthropic", 200_000, 15.0),
        ("claude-opus-4-5-20251101", "anthropic", 200_000, 5.0),
        ("claude-haiku-4-5-20251001", "anthropic", 200_000, 1.0),
        ("gpt-4o-2024-08-06", "openai", 128_000, 2.5),
        ("gpt-4.1", "openai", 1_047_576, 2.0),
        ("gpt-5", "openai", 400_000, 1.25),
        ("gpt-5-codex", "openai", 272_000, 1.25),
        ("gemini-2.5-pro", "google", 1_048_576, 1.25),
        ("gemini-2.5-flash", "google", 1_048_576, 0.3),
    ],
)
def test_known_models(model: str, provider: str, window: int, input_price: float) -> None:
    info = load_registry().lookup(model)
    assert (info.provider, info.context_window, info.assumed) == (provider, window, False)
    assert info.prices is not None and info.prices.input == input_price


def test_anthropic_cache_prices_follow_the_published_multipliers() -> None:
    prices = load_registry().lookup("claude-sonnet-4-5").prices
    assert prices is not None
    assert (prices.cache_write_5m, prices.cache_write_1h, prices.cache_read) == (3.75, 6.0, 0.3)


def test_cost_of_a_request() -> None:
    prices = load_registry().lookup("claude-sonnet-4-5").prices
    assert prices is not None
    cost = prices.cost(
        input_tokens=1000, output_tokens=500, cache_write_tokens=2000, cache_read_tokens=10_000
    )
    assert cost == pytest.approx((1000 * 3 + 500 * 15 + 2000 * 3.75 + 10_000 * 0.3) / 1e6)


def test_unknown_model_gets_labelled_assumed_defaults() -> None:
    info = load_registry().lookup("acme-llm-7")
    assert info.assumed
    assert "assumed" in info.label
    assert info.context_window > 0 and info.prices is None
    assert load_registry().lookup(None).assumed


def test_user_file_overrides_and_extends_the_bundled_entries(tmp_path: Path) -> None:
    user = tmp_path / "models.yaml"
    user.write_text(
        "models:\n"
        "  - match: claude-sonnet-4*\n"
        "    provider: anthropic\n"
        "    context_window: 500000\n"
        "    max_output: 1000\n"
        "    prices: {input: 1, output: 2}\n"
        "  - match: [acme-*]\n"
        "    provider: acme\n"
        "    context_window: 32000\n"
        "    max_output: 4000\n"
    )
    registry = load_registry(user)
    sonnet = registry.lookup("claude-sonnet-4-5")
    assert sonnet.context_window == 500_000 and sonnet.source == str(user)
    assert sonnet.prices is not None and sonnet.prices.cache_read == 0.1
    assert registry.lookup("acme-llm-7").provider == "acme"
    assert registry.lookup("gpt-4o").context_window == 128_000  # bundled still there


def test_the_user_file_in_the_config_dir_is_read_by_default(isolated_dirs: Path) -> None:
    config = isolated_dirs / "config"
    config.mkdir(parents=True)
    (config / "models.yaml").write_text(
        "models:\n  - {match: 'x-*', provider: x, context_window: 9, max_output: 1}\n"
    )
    assert load_registry().lookup("x-1").context_window == 9


def test_a_broken_user_file_is_a_one_line_error_with_the_line(tmp_path: Path) -> None:
    user = tmp_path / "models.yaml"
    user.write_text("models:\n  - match: [a\n    provider: b\n")
    with pytest.raises(CtxtopError, match=r"models\.yaml:\d+: invalid YAML") as info:
        load_registry(user)
    assert "\n" not in str(info.value)


def test_an_entry_without_a_window_is_reported() -> None:
    registry = load_registry()
    registry.add_document({"models": [{"match": "bad", "provider": "p"}]}, "user", first=True)
    with pytest.raises(CtxtopError, match="bad or missing field 'context_window'"):
        registry.lookup("bad")

"""Windows and prices come from the genai-prices dataset in its wheel (never fetched), the user's
file overrides them, and a model nobody knows says so instead of passing for a 200k model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from genai_prices import data_snapshot

from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.models.registry import load_registry


def genai_answer(model: str) -> Any:
    """genai-prices' own answer for a model id, through its public lookup."""
    _, found = data_snapshot.get_snapshot().find_provider_model(model, None, None, None)
    return found


@pytest.mark.parametrize(
    "model",
    [
        "claude-opus-5-5",
        "claude-opus-4-8",
        "claude-sonnet-4-5-20250929",
        "claude-haiku-4-5-20251001",
        "claude-opus-4-1-20250805",
        "gpt-5",
        "gpt-4o-2024-08-06",
        "gemini-2.5-flash",
    ],
)
def test_window_and_prices_are_the_datasets(model: str) -> None:
    info = load_registry().lookup(model)
    found = genai_answer(model)
    prices = found.get_prices(datetime.now(UTC))
    assert (info.context_window, info.window_source, info.assumed) == (
        found.context_window,
        "dataset",
        False,
    )
    assert info.prices is not None and info.prices_source == "dataset"
    assert info.prices.input == float(getattr(prices.input_mtok, "base", prices.input_mtok))
    assert info.prices.output == float(getattr(prices.output_mtok, "base", prices.output_mtok))


def test_claude_code_defaults_have_a_1m_window_and_their_cache_prices() -> None:
    """The issue's case: Claude Code 2.1.332's default model and 2.1.197's."""
    registry = load_registry()
    for model in ("claude-opus-5-5", "claude-opus-4-8"):
        info = registry.lookup(model)
        assert info.context_window == 1_000_000 and not info.assumed
        assert "window unknown" not in info.label
    prices = registry.lookup("claude-opus-5-5").prices
    assert prices is not None
    # Opus 5.5 reads its cache at 0.05x the input price, not the usual 0.1x.
    assert (prices.input, prices.cache_read) == (4.0, 0.2)
    assert prices.cache_write_5m == 5.0 and prices.cache_write_1h == 8.0


def test_a_1m_id_of_claude_code_names_the_1m_window() -> None:
    info = load_registry().lookup("claude-sonnet-4-5-20250929[1m]")
    assert (info.context_window, info.window_source) == (1_000_000, "model id")
    assert info.prices is not None and info.prices.input == 3.0


def test_cost_of_a_request() -> None:
    prices = load_registry().lookup("claude-sonnet-4-5").prices
    assert prices is not None
    cost = prices.cost(
        input_tokens=1000, output_tokens=500, cache_write_tokens=2000, cache_read_tokens=10_000
    )
    assert cost == pytest.approx((1000 * 3 + 500 * 15 + 2000 * 3.75 + 10_000 * 0.3) / 1e6)


def test_an_unknown_model_says_its_window_is_unknown() -> None:
    info = load_registry().lookup("acme-llm-7")
    assert info.assumed and info.window_source == "assumed"
    assert info.label == "acme-llm-7 (window unknown, assuming 200k)"
    assert info.context_window == 200_000 and info.prices is None
    assert load_registry().lookup(None).assumed


def test_a_model_the_dataset_prices_without_a_window_is_still_unknown_for_its_window() -> None:
    """genai-prices has gemini-2.5-pro's prices but no window: prices from the dataset, the
    window labelled as assumed (a Gemini CLI session gets its CLI's own window instead)."""
    assert genai_answer("gemini-2.5-pro").context_window is None
    info = load_registry().lookup("gemini-2.5-pro")
    assert info.assumed and "window unknown" in info.label
    assert info.prices is not None and info.prices_source == "dataset"


def test_the_dataset_is_the_wheels_never_an_updated_one() -> None:
    """genai-prices' update path installs a fetched snapshot as its "custom snapshot"; ctxtop
    reads the bundled data whatever is installed there."""
    data_snapshot.set_custom_snapshot(data_snapshot.DataSnapshot([], from_auto_update=True))
    try:
        info = load_registry().lookup("claude-opus-5-5")
    finally:
        data_snapshot.set_custom_snapshot(None)
    assert (info.context_window, info.window_source) == (1_000_000, "dataset")


def test_user_file_overrides_and_extends_the_dataset(tmp_path: Path) -> None:
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
        "  - match: claude-opus-5-5\n"
        "    context_window: 400000\n"
    )
    registry = load_registry(user)
    sonnet = registry.lookup("claude-sonnet-4-5")
    assert sonnet.context_window == 500_000 and sonnet.source == str(user)
    assert (sonnet.window_source, sonnet.prices_source) == ("user file", "user file")
    assert sonnet.prices is not None and sonnet.prices.cache_read == 0.1
    assert registry.lookup("acme-llm-7").provider == "acme"
    assert not registry.lookup("acme-llm-7").assumed
    # Only the window set: the prices stay the dataset's.
    opus = registry.lookup("claude-opus-5-5")
    assert (opus.context_window, opus.window_source, opus.prices_source) == (
        400_000,
        "user file",
        "dataset",
    )
    assert registry.lookup("gpt-4o").context_window == genai_answer("gpt-4o").context_window


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


def test_a_bad_window_in_the_user_file_is_reported(tmp_path: Path) -> None:
    user = tmp_path / "models.yaml"
    user.write_text("models:\n  - {match: bad, context_window: lots}\n")
    with pytest.raises(CtxtopError, match=r"models\.yaml \(bad\): bad or missing field"):
        load_registry(user).lookup("bad")


LOOK_UP = """
import json, sys
from ctxtop.engine.models.registry import lookup
info = lookup(sys.argv[1])
price = info.prices.input if info.prices else None
loaded = "genai_prices.data" in sys.modules
# The library's network updater and its HTTP client are never even imported.
assert not {"genai_prices.update_prices", "httpx2"} & set(sys.modules)
print(json.dumps([info.context_window, info.window_source, price, loaded]))
"""


def look_up_in_a_new_process(model: str, cache: Path) -> list[Any]:
    env = {**os.environ, "CTXTOP_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", LOOK_UP, model], capture_output=True, text=True, env=env, check=True
    )
    answer: list[Any] = json.loads(done.stdout)
    return answer


def test_a_later_run_answers_from_the_cache_without_loading_the_dataset(tmp_path: Path) -> None:
    first = look_up_in_a_new_process("claude-opus-5-5", tmp_path)
    second = look_up_in_a_new_process("claude-opus-5-5", tmp_path)
    assert first == [1_000_000, "dataset", 4.0, True]
    assert second == [1_000_000, "dataset", 4.0, False]
    # A model the dataset does not know is remembered as such too.
    assert look_up_in_a_new_process("acme-llm-7", tmp_path)[1:] == ["assumed", None, True]
    assert look_up_in_a_new_process("acme-llm-7", tmp_path)[1:] == ["assumed", None, False]


def test_a_damaged_cache_is_asked_again(tmp_path: Path) -> None:
    look_up_in_a_new_process("claude-opus-5-5", tmp_path)
    (cached,) = tmp_path.glob("genai-prices-answers-*.json")
    cached.write_text('{"claude-opus-5-5": {"id": 1, "context_window": "lots"}}')
    again = look_up_in_a_new_process("claude-opus-5-5", tmp_path)
    assert again == [1_000_000, "dataset", 4.0, True]

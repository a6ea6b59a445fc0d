"""The ``llm:`` settings block: defaults, values, errors that name the file, and the
``CTXTOP_LLM_*`` variables over it (the key itself is only ever read from the environment)."""

from __future__ import annotations

import pytest

from ctxtop.engine.compaction.llm import LLMFailure, endpoint
from ctxtop.engine.config import LLMSettings, parse_settings
from ctxtop.engine.errors import InputError


def test_defaults_and_values() -> None:
    assert parse_settings({}).llm == LLMSettings()
    llm = parse_settings(
        {"llm": {"protocol": "anthropic", "model": "big", "summary_model": "small",
                 "base_url": "http://127.0.0.1:9/", "api_key_env": "MY_KEY", "timeout": 5}}
    ).llm  # fmt: skip
    assert llm == LLMSettings("http://127.0.0.1:9/", "big", "small", "MY_KEY", "anthropic", 5.0)


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"protocol": "grpc"}, "llm.protocol must be openai or anthropic"),
        ({"timeout": 0}, "llm.timeout must be a positive number"),
        ({"model": 3}, "llm.model must be text"),
        ("gpt", "llm must be a mapping"),
    ],
)
def test_bad_values_are_one_line_errors_naming_the_file(block: object, message: str) -> None:
    with pytest.raises(InputError, match=message) as caught:
        parse_settings({"llm": block}, "/home/u/.config/ctxtop/config.yaml")
    assert str(caught.value).startswith("/home/u/.config/ctxtop/config.yaml: ")


def test_the_environment_overrides_the_block_and_holds_the_key() -> None:
    settings = LLMSettings(base_url="http://a/v1", model="big", api_key_env="MY_KEY")
    point = endpoint(settings, {"MY_KEY": "k1", "CTXTOP_LLM_SUMMARY_MODEL": "small"})
    assert (point.model, point.key, point.url()) == ("small", "k1", "http://a/v1/chat/completions")
    anthropic = endpoint(LLMSettings(model="m", protocol="anthropic"), {"ANTHROPIC_API_KEY": "k2"})
    assert anthropic.url() == "https://api.anthropic.com/v1/messages"
    assert anthropic.headers()["x-api-key"] == "k2"
    assert endpoint(LLMSettings(model="m"), {}).headers() == {"content-type": "application/json"}
    with pytest.raises(LLMFailure, match="no model set, there is no default"):
        endpoint(LLMSettings(), {})

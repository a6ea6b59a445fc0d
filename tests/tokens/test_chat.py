"""Chat structure is counted by the documented rules, checked against hand-worked figures."""

from __future__ import annotations

import json
import math

from ctxtop.engine.tokens import get_encoding
from ctxtop.engine.tokens.chat import (
    anthropic_image_tokens,
    count_chat,
    message_tokens,
    openai_image_tokens,
    tool_definitions_tokens,
)

ENC = get_encoding("o200k_base")


def test_each_message_costs_three_tokens_on_top_of_its_text() -> None:
    messages = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "function foo() { return x + y; }"},
    ]
    result = count_chat(messages, ENC.count)
    assert result.messages == (3 + ENC.count("You are terse."), 3 + 10)
    assert result.total == 6 + ENC.count("You are terse.") + 10


def test_tool_call_arguments_weigh_one_and_a_half_times() -> None:
    arguments = json.dumps({"path": "src/main.py", "limit": 200})
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "read_file", "arguments": arguments},
            }
        ],
    }
    expected = 3 + ENC.count("read_file") + math.ceil(1.5 * ENC.count(arguments))
    assert message_tokens(message, ENC.count) == expected


def test_tool_definitions_cost_16_plus_8_per_tool_plus_110_percent_of_the_schema() -> None:
    tools = [
        {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}},
        {"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}},
    ]
    schema_tokens = ENC.count(json.dumps(tools, separators=(",", ":")))
    assert tool_definitions_tokens(tools, ENC.count) == 16 + 16 + math.ceil(1.1 * schema_tokens)
    assert tool_definitions_tokens([], ENC.count) == 0


def test_openai_images_cost_85_plus_170_per_512px_tile_after_scaling() -> None:
    assert openai_image_tokens(512, 512) == 85 + 170  # one tile
    # 1024x1024 is scaled to 768x768: 2x2 tiles.
    assert openai_image_tokens(1024, 1024) == 85 + 170 * 4
    # 4096x2048 fits 2048x1024 first, then 1536x768: 3x2 tiles.
    assert openai_image_tokens(4096, 2048) == 85 + 170 * 6
    assert openai_image_tokens(4096, 2048, detail="low") == 85


def test_anthropic_images_cost_pixels_over_750() -> None:
    assert anthropic_image_tokens(1000, 750) == 1000
    # Long edge scaled down to 1568 first: 3136x1568 -> 1568x784.
    assert anthropic_image_tokens(3136, 1568) == math.ceil(1568 * 784 / 750)


def test_image_parts_in_content_use_the_providers_formula() -> None:
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": "data:...", "detail": "low"}},
        ],
    }
    assert message_tokens(message, ENC.count) == 3 + ENC.count("what is this?") + 85

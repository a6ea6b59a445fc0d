"""Log lines are decoded by msgspec for speed; whatever msgspec refuses goes through the stdlib,
so a line reads the same as before: the same values, the same reason for a bad line."""

from __future__ import annotations

import json
import math

import pytest

from ctxtop.engine.sessions.json_lines import decode_line

# Lines msgspec refuses and the stdlib reads: a tool output cut inside an emoji (a lone
# surrogate escape), NaN and a number beyond a float (both Python's JSON extensions).
STDLIB_ONLY = [
    b'{"type":"user","content":"cut \\ud83d"}',
    b'{"usage":{"input_tokens":NaN}}',
    b'{"value":1e400}',
]


@pytest.mark.parametrize("raw", STDLIB_ONLY)
def test_lines_only_the_stdlib_reads_are_still_read(raw: bytes) -> None:
    value, reason = decode_line(raw)
    assert reason is None
    assert json.dumps(value) == json.dumps(json.loads(raw))


def test_values_are_the_stdlibs() -> None:
    raw = b'{"big":123456789012345678901234567890,"f":0.1,"s":"\\u00e9\\ud83d\\ude00","n":null}\r\n'
    value, reason = decode_line(raw)
    assert reason is None
    assert value == json.loads(raw)
    assert isinstance(value["big"], int)
    assert math.isinf(decode_line(b"-1e999")[0])


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b'{"a":"\xff"}', "invalid UTF-8 at byte 6"),
        (b'{"a": 1} x', "invalid JSON: Extra data (column 10)"),
        (b'{"a": "tab\there"}', "invalid JSON: Invalid control character at (column 11)"),
        (b"[" * 5000 + b"]" * 5000, "invalid JSON: nested too deeply"),
        (b"   ", None),
    ],
)
def test_bad_lines_give_the_stdlib_reason(raw: bytes, reason: str | None) -> None:
    assert decode_line(raw) == (None, reason)

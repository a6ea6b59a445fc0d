"""The figures of a request and of its answer for each API: the system prompt, each tool, the
messages by kind, images, breakpoints, and the usage read from the stream or the JSON body."""

from __future__ import annotations

import base64
import json
import struct
import tracemalloc
import zlib
from collections.abc import Iterable

import pytest

from ctxtop.engine.proxy import usage as usage_module
from ctxtop.engine.proxy.composition import measure
from ctxtop.engine.proxy.usage import JSON_KEEP_LIMIT, UsageScanner
from ctxtop.engine.tokens.encoding import get_encoding


def png(width: int, height: int) -> str:
    header = struct.pack(">II", width, height) + b"\x08\x02\x00\x00\x00"
    ihdr = b"IHDR" + header
    data = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + ihdr + struct.pack(">I", zlib.crc32(ihdr))
    return base64.b64encode(data + b"\x00" * 64).decode()


def scanned(protocol: str, chunks: Iterable[bytes]) -> dict[str, int]:
    scanner = UsageScanner(protocol)
    for chunk in chunks:
        scanner.feed(chunk)
    return scanner.usage


def split_everywhere(data: bytes) -> list[list[bytes]]:
    """``data`` cut into two chunks at every 7th byte (an SSE line may arrive in pieces)."""
    return [[data[:i], data[i:]] for i in range(0, len(data), 7)]


def test_anthropic_images_are_counted_by_their_size() -> None:
    small = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": png(200, 150)},
    }
    big = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": png(3000, 2000)},
    }
    body = {"messages": [{"role": "user", "content": [small, big]}]}
    figures = measure("anthropic", body)
    assert figures["images"] == 2
    # 200x150/750 = 40; 3000x2000 scaled to 1568x1045.3 -> 2186.
    assert figures["messages"]["kinds"]["image"] == 40 + 2186


def test_responses_request_figures() -> None:
    body = {
        "instructions": "Be helpful. " * 20,
        "tools": [{"type": "function", "name": "exec_command", "parameters": {"type": "object"}}],
        "input": [
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "sandbox rules " * 30}],
            },
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "hi"},
                    {"type": "input_image", "image_url": "data:", "detail": "low"},
                ],
            },
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": '{"cmd":"ls"}',
                "call_id": "c1",
            },
            {"type": "function_call_output", "call_id": "c1", "output": "a.txt\nb.txt"},
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "thinking about it"}],
            },
        ],
    }
    figures = measure("openai-responses", body)
    # The system prompt is the instructions field; the developer message is a message (the
    # agent's log holds it: counted once, in the conversation).
    [block] = figures["system"]["blocks"]
    assert block["tokens"] == get_encoding("o200k_base").count("Be helpful. " * 20)
    assert figures["messages"]["count"] == 2
    assert [t["name"] for t in figures["tools"]["per_tool"]] == ["exec_command"]
    kinds = figures["messages"]["kinds"]
    assert kinds["image"] == 85  # detail low
    assert {"user_text", "tool_use", "tool_result", "thinking"} <= set(kinds)
    assert kinds["instructions"] == get_encoding("o200k_base").count("sandbox rules " * 30)
    assert figures["breakpoints"] == []


def test_chat_and_gemini_request_figures() -> None:
    chat = measure(
        "openai-chat",
        {
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "list"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "1",
                            "type": "function",
                            "function": {"name": "ls", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "1", "content": "x.py"},
            ],
            "tools": [{"type": "function", "function": {"name": "ls", "parameters": {}}}],
        },
    )
    assert chat["system"]["tokens"] == 0 and chat["messages"]["count"] == 4
    assert chat["messages"]["kinds"]["instructions"] > 0  # the system message, in the log too
    assert chat["tools"]["per_tool"][0]["name"] == "ls"
    assert {"tool_use", "tool_result", "user_text"} <= set(chat["messages"]["kinds"])
    gemini = measure(
        "gemini",
        {
            "systemInstruction": {"parts": [{"text": "You are Gemini CLI."}]},
            "tools": [
                {"functionDeclarations": [{"name": "read_file"}, {"name": "run_shell_command"}]}
            ],
            "contents": [
                {
                    "role": "user",
                    "parts": [
                        {"text": "read it"},
                        {"inlineData": {"mimeType": "image/png", "data": ""}},
                    ],
                },
                {
                    "role": "model",
                    "parts": [
                        {"thought": True, "text": "hmm"},
                        {"functionCall": {"name": "read_file", "args": {}}},
                    ],
                },
                {
                    "role": "user",
                    "parts": [
                        {"functionResponse": {"name": "read_file", "response": {"output": "abc"}}}
                    ],
                },
            ],
            "cachedContent": "cachedContents/abc",
        },
    )
    assert [t["name"] for t in gemini["tools"]["per_tool"]] == ["read_file", "run_shell_command"]
    assert gemini["images"] == 1 and gemini["breakpoints"][0]["at"] == "cachedContent"
    assert {"thinking", "tool_use", "tool_result", "user_text"} <= set(gemini["messages"]["kinds"])


def test_no_text_of_the_request_is_in_its_figures() -> None:
    body = {
        "system": "SECRET-SYSTEM",
        "tools": [{"name": "T", "description": "SECRET-TOOL-DOC", "input_schema": {}}],
        "messages": [{"role": "user", "content": "SECRET-MESSAGE"}],
    }
    text = json.dumps(measure("anthropic", body))
    assert "SECRET" not in text


def test_usage_of_each_api_from_its_stream_cut_anywhere() -> None:
    responses = (
        b'event: response.created\ndata: {"type":"response.created","response":{"usage":null}}\n\n'
        + (
            b'event: response.completed\ndata: {"type":"response.completed","response":{"usage":'
            b'{"input_tokens":900,"input_tokens_details":{"cached_tokens":600},"output_tokens":12}}}\n\n'
        )
    )
    chat = (
        b'data: {"choices":[{"delta":{"content":"hi"}}]}\n\n'
        b'data: {"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":3,'
        b'"prompt_tokens_details":{"cached_tokens":10}}}\n\ndata: [DONE]\n\n'
    )
    gemini = (
        b'data: {"candidates":[],"usageMetadata":{"promptTokenCount":70}}\r\n\r\n'
        b'data: {"usageMetadata":{"promptTokenCount":80,"candidatesTokenCount":5,'
        b'"thoughtsTokenCount":4,"cachedContentTokenCount":30}}\r\n\r\n'
    )
    expected = {  # (prompt, cache reads, cache writes, output)
        "openai-responses": (responses, (900, 600, 0, 12)),
        "openai-chat": (chat, (50, 10, 0, 3)),
        "gemini": (gemini, (80, 30, 0, 9)),
    }
    names = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")
    for protocol, (stream, figures) in expected.items():
        usage = dict(zip(names, figures, strict=True))
        for chunks in split_everywhere(stream):
            assert scanned(protocol, chunks) == usage, (protocol, chunks)


def test_usage_of_an_answer_that_is_not_streamed() -> None:
    body = json.dumps(
        {
            "id": "msg",
            "usage": {"input_tokens": 5, "cache_read_input_tokens": 95, "output_tokens": 7},
        }
    ).encode()
    assert scanned("anthropic", [body[:10], body[10:]])["input_tokens"] == 100
    gemini = json.dumps(
        [
            {"usageMetadata": {"promptTokenCount": 3}},
            {"usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 1}},
        ]
    ).encode()
    assert scanned("gemini", [gemini])["input_tokens"] == 4
    assert scanned("anthropic", [b"<html>bad gateway</html>"]) == {}


ANTHROPIC_STREAM = (
    b'event: message_start\ndata: {"type":"message_start","message":{"usage":'
    b'{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":1}}}\n\n'
    b'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":33}}\n\n'
)
ANTHROPIC_USAGE = {
    "input_tokens": 100,
    "cache_read_tokens": 90,
    "cache_write_tokens": 0,
    "output_tokens": 33,
}


def held_while(feed: Iterable[bytes], scanner: UsageScanner) -> tuple[int, int]:
    """(bytes the scanner holds after, the most it held at once) while fed ``feed``."""
    tracemalloc.start()
    try:
        for chunk in feed:
            scanner.feed(chunk)
        return tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()


def test_a_stream_fed_a_byte_at_a_time_gives_its_usage() -> None:
    chunks = (ANTHROPIC_STREAM[i : i + 1] for i in range(len(ANTHROPIC_STREAM)))
    assert scanned("anthropic", chunks) == ANTHROPIC_USAGE


def test_a_huge_answer_without_a_newline_is_not_kept() -> None:
    """Past what can be read for its usage, nothing of the answer is held, and the scan never
    holds more than that limit at once (the partial line was joined again on every chunk: a
    63 MB answer took 18 s through the proxy and held it all)."""
    chunk = b"x" * (256 * 1024)
    count = (JSON_KEEP_LIMIT + 8 * 1024 * 1024) // len(chunk)
    scanner = UsageScanner("anthropic")
    after, peak = held_while([b'{"pad":"', *[chunk] * count], scanner)
    assert after < 64 * 1024
    assert peak < JSON_KEEP_LIMIT + 2 * len(chunk)
    assert scanner.usage == {}


def test_an_overlong_stream_line_is_skipped_and_the_usage_after_it_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    limit = 1024 * 1024
    monkeypatch.setattr(usage_module, "LINE_KEEP_LIMIT", limit)
    chunk = b"y" * (64 * 1024)
    scanner = UsageScanner("anthropic")
    start = b'data: {"type":"content_block_delta","text":"'
    after, peak = held_while([start, *[chunk] * (3 * limit // len(chunk))], scanner)
    assert after < 64 * 1024 and peak < limit + 2 * len(chunk)
    scanner.feed(b'"}\n\n' + ANTHROPIC_STREAM)
    assert scanner.usage == ANTHROPIC_USAGE

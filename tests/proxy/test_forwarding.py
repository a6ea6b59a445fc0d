"""The proxy forwards an agent's requests to the configured upstream byte for byte, streams the
answer back as it comes, and stores each model request's figures (never its text, never a key)
in a per-session JSONL in the data dir."""

from __future__ import annotations

import http.client
import json
import stat
import time
from pathlib import Path

from measurement_lines import read_measurements
from proxy_upstream import proxy_to, proxy_to_each, sse_events, upstream

from ctxtop.engine.proxy.store import measurement_path

SESSION = "0f6c2d1e-4b7a-4c1e-9a55-5d9e3c2b1a00"
KEY = "sk-ant-api03-test-key-that-must-never-be-stored-0123456789"


def anthropic_body(**extra: object) -> bytes:
    body = {
        "model": "claude-sonnet-4-5",
        "stream": True,
        "metadata": {"user_id": f"user_{'ab' * 32}_account__session_{SESSION}"},
        "system": [
            {"type": "text", "text": "You are Claude Code. SYSTEM-SECRET-TEXT"},
            {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}},
        ],
        "tools": [
            {"name": "Bash", "description": "run a command", "input_schema": {"type": "object"}},
            {
                "name": "Read",
                "description": "read a file " * 50,
                "input_schema": {"type": "object"},
            },
        ],
        "messages": [
            {"role": "user", "content": "MESSAGE-TEXT-ONE"},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": "a.txt b.txt",
                        "cache_control": {"type": "ephemeral", "ttl": "1h"},
                    }
                ],
            },
        ],
        **extra,
    }
    # Odd spacing and key order: the upstream must see these exact bytes, not a re-encoding.
    return json.dumps(body, indent=1, ensure_ascii=False).encode() + b"\n"


def post(
    port: int, path: str, body: bytes, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(
            "POST", path, body=body, headers={"content-type": "application/json", **(headers or {})}
        )
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def wait_for_lines(session: str, count: int) -> list[dict[str, object]]:
    """The measurement lines once ``count`` are written (they follow the answer's end)."""
    for _ in range(200):
        lines = read_measurements(session)
        if len(lines) >= count:
            return lines
        time.sleep(0.05)
    return read_measurements(session)


def test_request_and_stream_pass_byte_for_byte_and_the_figures_are_stored(
    isolated_dirs: Path,
) -> None:
    body = anthropic_body()
    with upstream() as up, proxy_to(up.url) as proxy:
        status, headers, answer = post(
            proxy.port,
            "/v1/messages?beta=true",
            body,
            {"x-api-key": KEY, "anthropic-version": "2023-06-01"},
        )
    assert status == 200 and headers["content-type"] == "text/event-stream"
    assert answer == sse_events()
    assert [s.path for s in up.seen] == ["/v1/messages?beta=true"]
    assert up.seen[0].body == body
    assert up.seen[0].headers["x-api-key"] == KEY  # forwarded, as the agent sent it
    [line] = wait_for_lines(SESSION, 1)
    assert line["session_id"] == SESSION and line["protocol"] == "anthropic"
    assert [t["name"] for t in line["tools"]["per_tool"]] == ["Bash", "Read"]
    bash, read = line["tools"]["per_tool"]
    assert read["tokens"] > bash["tokens"] + 40  # the long description costs
    assert len(line["system"]["blocks"]) == 2
    assert [b["at"] for b in line["breakpoints"]] == ["system[1]", "messages[2].content[0]"]
    first, second = line["breakpoints"]
    assert first["prefix_tokens"] == line["tools"]["tokens"] + line["system"]["tokens"]
    assert second["prefix_tokens"] == line["total_tokens"] and second["ttl"] == "1h"
    assert set(line["messages"]["kinds"]) >= {"user_text", "tool_use", "tool_result", "framing"}
    # Usage from the stream: message_start's prompt (1200 + 300 written + 500 read),
    # message_delta's output.
    assert line["usage"] == {
        "input_tokens": 2000,
        "cache_read_tokens": 500,
        "cache_write_tokens": 300,
        "output_tokens": 42,
    }
    stored = measurement_path(SESSION)
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    text = stored.read_text()
    for secret in (KEY, "SYSTEM-SECRET-TEXT", "MESSAGE-TEXT-ONE", "a.txt"):
        assert secret not in text


def test_the_key_is_in_no_file_ctxtop_writes(isolated_dirs: Path) -> None:
    with upstream("status500") as up, proxy_to(up.url) as proxy:
        post(
            proxy.port,
            "/v1/messages",
            anthropic_body(),
            {"x-api-key": KEY, "authorization": f"Bearer {KEY}"},
        )
        wait_for_lines(SESSION, 1)
    written = [p for p in isolated_dirs.rglob("*") if p.is_file()]
    assert written  # the measurement at least
    for path in written:
        assert KEY.encode() not in path.read_bytes(), path


def test_each_api_reaches_its_own_upstream_and_other_paths_are_refused(isolated_dirs: Path) -> None:
    with proxy_to_each() as (port, anthropic, openai, gemini):
        assert post(port, "/v1/messages", b"{}")[0] == 200
        assert post(port, "/v1/responses", b'{"input":"hi"}', {"session_id": SESSION})[0] == 200
        assert post(port, "/v1/chat/completions", b'{"messages":[]}')[0] == 200
        assert (
            post(port, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", b"{}")[0]
            == 200
        )
        status, _, answer = post(port, "/etc/passwd", b"")
    assert [s.path for s in anthropic.seen] == ["/v1/messages"]
    assert [s.path for s in openai.seen] == ["/v1/responses", "/v1/chat/completions"]
    assert [s.path for s in gemini.seen] == [
        "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    ]
    assert status == 404 and b"no API at /etc/passwd" in answer
    codex = wait_for_lines(SESSION, 1)
    assert codex[0]["protocol"] == "openai-responses" and codex[0]["messages"]["count"] == 1


def test_the_path_decides_the_api_and_another_apis_header_is_refused(isolated_dirs: Path) -> None:
    """An OpenAI-path request with ``anthropic-version`` used to go to the Anthropic upstream
    with the OpenAI key; now it is refused in the OpenAI error shape, and reaches no upstream."""
    openai_key = {"authorization": "Bearer sk-openai-key-for-openai-only"}
    with proxy_to_each() as (port, anthropic, openai, gemini):
        chat = b'{"messages":[]}'
        mixed = {**openai_key, "anthropic-version": "2023-06-01"}
        refused_openai = post(port, "/v1/chat/completions", chat, mixed)
        refused_anthropic = post(port, "/v1/messages", b"{}", {"x-goog-api-key": "AIza-k"})
        refused_gemini = post(
            port, "/v1beta/models/g:generateContent", b"{}", {"anthropic-version": "1"}
        )
        # Gemini's v1 model methods are Gemini's by path (no header needed) ...
        assert post(port, "/v1/models/gemini-2.5-pro:countTokens", b"{}")[0] == 200
        # ... and a path two APIs share goes where the API's own header says.
        shared = {"anthropic-version": "2023-06-01"}
        assert post(port, "/v1/models?limit=5", b"", shared)[0] == 200
        assert post(port, "/v1/models", b"", openai_key)[0] == 200
    status, _, answer = refused_openai
    assert status == 400
    error = json.loads(answer)["error"]  # OpenAI's shape
    assert error["type"] == "invalid_request_error" and "anthropic-version" in error["message"]
    status, _, answer = refused_anthropic
    assert status == 400 and json.loads(answer)["type"] == "error"  # Anthropic's shape
    status, _, answer = refused_gemini
    assert status == 400 and json.loads(answer)["error"]["status"] == "INVALID_ARGUMENT"
    assert [s.path for s in anthropic.seen] == ["/v1/models?limit=5"]
    assert [s.path for s in openai.seen] == ["/v1/models"]
    assert [s.path for s in gemini.seen] == ["/v1/models/gemini-2.5-pro:countTokens"]

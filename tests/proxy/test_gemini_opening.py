"""Gemini CLI sends no session id: its requests are measured under ``unknown`` and tied to the
session file by the conversation's opening (engine/proxy/opening.py). A request built from the
sample Gemini CLI session, sent through the real proxy to a loopback upstream, makes that
session's report and live view *measured*; a request of another conversation does not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from proxy_upstream import proxy_to, upstream
from test_forwarding import post, wait_for_lines

from ctxtop.engine.live.session import LiveSession

ROOT = Path(__file__).resolve().parents[2]
SESSION = (
    ROOT / "sample_sessions/gemini-cli/.gemini/tmp/calc-gemini/chats"
    / "session-2026-11-23T03-12-196d3f0b.jsonl"
)  # fmt: skip
PATH = "/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse"
REPORTED = 13_000
STREAM = (
    b'data: {"candidates":[{"content":{"parts":[{"text":"ok"}]}}],'
    b'"usageMetadata":{"promptTokenCount":%d,"candidatesTokenCount":2}}\n\n' % REPORTED
)


def session_messages() -> list[dict[str, Any]]:
    """The session file's messages in order, each as last written (answers are written twice)."""
    messages: dict[str, dict[str, Any]] = {}
    for raw in SESSION.read_text(encoding="utf-8").splitlines():
        record = json.loads(raw)
        for message in record.get("$set", {}).get("messages", [record]):
            if message.get("type") in ("user", "gemini") and "id" in message:
                messages[message["id"]] = message
    return list(messages.values())


def request_body(first_prompt: str | None = None) -> bytes:
    """A generateContent body as Gemini CLI builds it from the session's history (the first
    prompt replaced by ``first_prompt`` when given: another conversation)."""
    contents = []
    prompts = 0
    for message in session_messages():
        if message["type"] == "gemini":
            parts = [{"text": message["content"]}] if message["content"] else []
            parts += [{"functionCall": {"name": c["name"], "args": c["args"]}} for c in
                      message.get("toolCalls", [])]  # fmt: skip
            contents.append({"role": "model", "parts": parts or [{"text": ""}]})
            continue
        parts = message["content"]
        if isinstance(parts, list) and "text" in parts[0]:
            prompts += 1
            if prompts == 2 and first_prompt is not None:
                parts = [{"text": first_prompt}]
        contents.append({"role": "user", "parts": parts})
    body = {
        "contents": contents,
        "systemInstruction": {"parts": [{"text": "You are Gemini CLI. " * 500}]},
        "tools": [{"functionDeclarations": [
            {"name": "read_file", "description": "read " * 300, "parameters": {"type": "object"}},
            {"name": "replace", "description": "edit " * 200, "parameters": {"type": "object"}},
        ]}],
    }  # fmt: skip
    return json.dumps(body).encode()


def report() -> dict[str, Any]:
    run = subprocess.run(
        [sys.executable, "-m", "ctxtop", "report", "--json", str(SESSION)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(run.stdout)
    return result


def system_section(analysis: dict[str, Any]) -> tuple[int, str]:
    [system] = [s for s in analysis["sections"] if s["name"] == "system"]
    return system["tokens"], system["provenance"]


def test_a_gemini_request_is_tied_to_its_session_by_the_opening() -> None:
    with upstream("sse", STREAM) as model, proxy_to(model.url) as proxy:
        status, _, _ = post(proxy.port, PATH, request_body("Something else entirely."))
        assert status == 200
        [other] = wait_for_lines("unknown", 1)
        assert other["session_id"] is None and other["opening_sha256"]
        assert "measured" not in report()  # another conversation's request

        status, _, _ = post(proxy.port, PATH, request_body())
        assert status == 200
        lines = wait_for_lines("unknown", 2)
    assert lines[1]["opening_sha256"] != other["opening_sha256"]

    shown = report()
    assert shown["session_id"] == "196d3f0b-bbef-423c-a372-76f8141d3f43"
    measured = shown["measured"]
    assert measured["protocol"] == "gemini" and measured["reported_input_tokens"] == REPORTED
    assert [tool["name"] for tool in measured["tools"]] == ["read_file", "replace"]
    tokens, provenance = system_section(shown["analysis"])
    assert provenance == "measured"
    assert tokens == measured["system_tokens"] + measured["tool_tokens"]

    live = LiveSession(SESSION)
    live.poll()
    view = live.view()
    assert view is not None and view.measured is not None and view.analysis is not None
    [system] = [s for s in view.analysis.sections if s.name == "system"]
    assert (system.tokens, system.provenance) == (tokens, provenance)

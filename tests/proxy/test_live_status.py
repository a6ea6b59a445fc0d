"""``ctxtop live``'s (and the dashboard header's) "the model receives N (reported)": N is the
prompt the API reported, once. Anthropic's ``input_tokens`` is the uncached part; the proxy
stores the whole prompt, its cache reads and writes already in it (adding them again doubled a
cached prompt: 28,365 for a 14,186-token one)."""

from __future__ import annotations

import json
import urllib.request

from proxy_upstream import USAGE_START, proxy_to, upstream

from ctxtop.engine.live.live_status import live_status
from ctxtop.engine.proxy.measured_prompt import latest_measurement

SESSION = "5f0c7e55-9d0b-4e43-9a1e-3c8d2f1b6a70"


def test_the_model_receives_the_reported_prompt_once() -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 100,
        "system": "You are a coding agent.",
        "tools": [{"name": "Bash", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "hello"}],
        "stream": True,
    }
    with upstream("sse") as server, proxy_to(server.url) as proxy:
        request = urllib.request.Request(
            f"http://127.0.0.1:{proxy.port}/v1/messages",
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json", "x-claude-code-session-id": SESSION},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            answer.read()
    # The whole prompt, as Anthropic splits it: uncached input, cache reads, cache writes.
    prompt = (
        USAGE_START["input_tokens"]
        + USAGE_START["cache_read_input_tokens"]
        + USAGE_START["cache_creation_input_tokens"]
    )
    status = live_status(SESSION)
    assert status.received is not None and status.received.reported == prompt
    assert status.summary() == f"proxied: the model receives {prompt:,} (reported)"
    # The report's measured prompt is scaled to the same figure.
    measured = latest_measurement(SESSION)
    assert measured is not None and measured.reported_input == prompt

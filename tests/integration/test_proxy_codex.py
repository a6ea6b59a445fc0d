"""Live mode with the real Codex CLI: codex -> a byte tap -> ctxtop proxy -> the model server
(Responses API, streaming). A turn of several tool calls completes, the model server receives
exactly the bytes the CLI sent, and each model request is measured under Codex's session id
(its ``session_id`` header, the id in its rollout's name)."""

from __future__ import annotations

import json
from pathlib import Path

from agents import CODEX_CONFIG, codex_home
from measurement_lines import read_measurements
from one_turn import FINAL, PROMPT, codex_replies, project_files
from tap import Tap, ctxtop_proxy

from ctxtop.engine.live.session import LiveSession
from ctxtop.engine.tokens.encoding import get_encoding

ROUNDS = 3


def test_codex_runs_a_multi_tool_turn_through_the_proxy(tmp_path: Path) -> None:
    with codex_home(tmp_path, codex_replies(ROUNDS), project_files(ROUNDS)) as codex:
        with ctxtop_proxy(codex.server.port) as proxy:
            tap = Tap(proxy.port)
            config = CODEX_CONFIG.format(port=tap.port)
            (codex.home / ".codex" / "config.toml").write_text(config, encoding="utf-8")
            rollout = codex.first_session(PROMPT)
            tap.close()
        received = codex.server.requests
    events = rollout.read_text(encoding="utf-8")
    assert FINAL in events
    calls = [r for r in received if r["path"].split("?")[0].endswith("/responses")]
    assert len(calls) == ROUNDS + 1
    sent = b"".join(tap.sent)
    assert all(request["raw"] in sent for request in received)
    assert sent.count(b"POST /v1/responses") == len(calls)
    session = json.loads(events.splitlines()[0])["payload"]["id"]
    assert session in rollout.name
    lines = read_measurements(session)
    assert len(lines) == ROUNDS + 1
    assert all(line["protocol"] == "openai-responses" for line in lines)
    # This Codex sends its base instructions as a developer message (no instructions field):
    # they and the other developer messages are in the rollout too, so they are measured as
    # conversation (kind instructions), never also as system prompt.
    last = received[-1]["body"]
    assert "instructions" not in last and lines[-1]["system"]["tokens"] == 0
    developer = [i for i in last["input"] if i.get("role") == "developer"]
    assert len(developer) >= 2  # the base instructions, the skills list
    texts = ["\n".join(part["text"] for part in item["content"]) for item in developer]
    assert lines[-1]["messages"]["kinds"]["instructions"] == sum(
        get_encoding("o200k_base").count_batch(texts)
    )
    assert lines[-1]["tools"]["count"] > 0
    assert lines[-1]["messages"]["kinds"]["tool_result"] > 0
    assert all(line["usage"]["input_tokens"] > 0 for line in lines)
    # The dashboard's view of the CLI's own log shows the system prompt and tools as measured.
    live = LiveSession(rollout)
    live.poll()
    view = live.view()
    assert view is not None and view.analysis is not None and view.measured is not None
    shown = {s.name: s for s in view.analysis.sections}
    system, instructions = shown["system"], shown["instructions"]
    assert system.provenance == "measured" and system.tokens == view.measured.outside_log
    assert system.tokens == view.measured.tool_tokens  # the tools alone: the log holds the rest
    # The log's instructions section (base instructions, developer messages, environment) gets
    # its share of the measured messages: at least the developer messages' measured tokens
    # (it was a fraction of them while they also counted as system prompt).
    measured_kinds = dict(view.measured.kinds)
    assert instructions.provenance == "calibrated"
    assert instructions.tokens >= 0.9 * measured_kinds["instructions"]
    content = [s for s in view.analysis.sections if s.name not in ("autocompact_buffer", "free")]
    total = view.measured.outside_log + view.measured.message_tokens
    assert abs(sum(s.tokens for s in content) - total) <= len(content)  # the totals add up

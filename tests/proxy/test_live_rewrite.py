"""The live rewriters on requests the real Claude Code and Codex CLIs sent, under plans made from
the sessions they wrote (tests/proxy/data/live, see its PROVENANCE.md): the model receives the
placeholders or the summary a fork would hold, every call keeps its result, thinking blocks and
the turn in progress stay as sent, and the same request gives the same bytes every time."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.live.apply_plan import compact_plan, edit_plan
from ctxtop.engine.proxy.live_plan import LivePlan
from ctxtop.engine.proxy.rewrite_anthropic import entry
from ctxtop.engine.proxy.rewrite_common import pairs_intact
from ctxtop.engine.proxy.rewrite_live import rewrite_body
from ctxtop.engine.proxy.rewrite_openai import response_entry

DATA = Path(__file__).resolve().parent / "data" / "live"
CLAUDE_LOG = next((DATA / "claude-code").glob("*-*-*.jsonl"))
CODEX_LOG = next((DATA / "codex").glob("rollout-*.jsonl"))
PLACEHOLDER = "[ctxtop: old tool result cleared"


def body_line(number: int) -> str:
    """A line only ``fileNN.txt`` holds (live_capture.line_of)."""
    return f"file{number:02d} body line 10 only in this file: {number * 7919 + 10}"


def request(agent: str) -> bytes:
    return (DATA / agent / "request.json").read_bytes()


def claude_messages(body: bytes) -> list[dict[str, Any]]:
    return list(json.loads(body)["messages"])


def codex_input(body: bytes) -> list[dict[str, Any]]:
    return list(json.loads(body)["input"])


def rewritten(protocol: str, body: bytes, plan: LivePlan) -> bytes:
    new = rewrite_body(protocol, body, plan)
    assert new is not None
    again = rewrite_body(protocol, body, plan)
    assert again == new  # deterministic: the prompt cache warms again after one write
    return new


def with_thinking(body: bytes) -> bytes:
    """The request with a signed thinking block first in every model message (the model server
    sends none; the shape is Anthropic's)."""
    value = json.loads(body)
    for number, message in enumerate(value["messages"]):
        if message["role"] == "assistant":
            thinking = {
                "type": "thinking",
                "thinking": f"plan {number}",
                "signature": f"sig{number}==",
            }
            message["content"].insert(0, thinking)
    return json.dumps(value).encode()


def thinking(messages: list[dict[str, Any]]) -> list[Any]:
    return [
        block
        for m in messages
        if m["role"] == "assistant"
        for block in m["content"]
        if block["type"] == "thinking"
    ]


def test_claude_edit_sends_the_placeholders_of_the_fork() -> None:
    body = request("claude-code")
    plan, outcome = edit_plan(CLAUDE_LOG, Policy(), CLAUDE_LOG.stem)
    cleared = [change.tool_call_id for change in outcome.preview.details.changed]
    assert cleared == list(plan.results) and len(cleared) == 2  # 5 tool uses, the last 3 kept
    new = rewritten("anthropic", body, plan)
    text = new.decode()
    assert text.count(PLACEHOLDER) == 2
    assert body_line(1) not in text and body_line(2) not in text
    for kept in (3, 4, 5):
        assert body_line(kept) in text
    results = {
        block["tool_use_id"]: block["content"]
        for message in claude_messages(new)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    }
    for call in cleared:  # the text the fork holds, not another
        assert results[call] == plan.results[call]
    before, after = json.loads(body), json.loads(new)
    assert {k: v for k, v in before.items() if k != "messages"} == {
        k: v for k, v in after.items() if k != "messages"
    }
    assert pairs_intact([entry(m) for m in after["messages"]])
    assert rewrite_body("anthropic", new, plan) is None  # already as the plan says


def test_claude_edit_leaves_the_turn_in_progress_and_thinking_as_sent() -> None:
    body = with_thinking(request("claude-code"))
    plan, _ = edit_plan(CLAUDE_LOG, Policy(keep_tool_uses=0), CLAUDE_LOG.stem)
    assert len(plan.results) == 5  # every result, the one being sent now too
    before, after = claude_messages(body), claude_messages(rewritten("anthropic", body, plan))
    assert after[-1] == before[-1]  # the result being sent now stays
    assert body_line(5) in json.dumps(after[-1])
    assert json.dumps(after).count(PLACEHOLDER) == 4
    assert thinking(after) == thinking(before) and len(thinking(after)) == 6


def test_claude_compaction_sends_the_summary_then_the_kept_rounds() -> None:
    body = with_thinking(request("claude-code"))
    plan, outcome = compact_plan(CLAUDE_LOG, CLAUDE_LOG.stem, keep_rounds=2)
    assert outcome.preview.details.cut.kept_request is not None and plan.compact is not None
    new = rewritten("anthropic", body, plan)
    before, after = claude_messages(body), claude_messages(new)
    first = after[0]["content"]
    assert first[0] == before[0]["content"][0]  # Claude Code's context reminder stays first
    assert first[1]["text"] == plan.compact.message  # the summary the fork would hold
    assert first[2]["text"] == "Now read file04 and file05."  # the turn's request, verbatim
    assert after[1] == before[1]  # its role-system message
    assert after[2:] == before[-2:]  # the kept round (thinking, signature) and the result sent now
    text = new.decode()
    for gone in (1, 2, 3, 4):
        assert body_line(gone) not in text
    assert body_line(5) in text
    assert pairs_intact([entry(m) for m in after])


def test_a_request_without_the_plans_rounds_is_left_alone() -> None:
    """A side request (a title), or another conversation under the same session id."""
    plan, _ = compact_plan(CLAUDE_LOG, CLAUDE_LOG.stem, keep_rounds=2)
    side = {"model": "m", "messages": [{"role": "user", "content": "Say a title for: hello"}]}
    assert rewrite_body("anthropic", json.dumps(side).encode(), plan) is None
    body = json.loads(request("claude-code"))
    body["messages"] = body["messages"][:4]  # an older request: its rounds are all summarised
    assert rewrite_body("anthropic", json.dumps(body).encode(), plan) is None
    assert rewrite_body("anthropic", b"not json", plan) is None
    assert rewrite_body("gemini-unknown", request("claude-code"), plan) is None


def test_a_compaction_never_separates_a_call_from_its_result() -> None:
    """A summarised call whose result the request sends only after the kept round's call (so
    the summary would drop the call and keep its result): the request is left alone."""
    plan, _ = compact_plan(CLAUDE_LOG, CLAUDE_LOG.stem, keep_rounds=2)
    body = json.loads(request("claude-code"))
    messages = body["messages"]
    late = messages[-3]["content"].pop()  # turn 2's first result (toolu_..01, summarised) ...
    messages[-3]["content"] = [{"type": "text", "text": "(interrupted)"}]
    messages[-1]["content"].insert(0, late)  # ... sent with the kept round's result
    assert rewrite_body("anthropic", json.dumps(body).encode(), plan) is None


def test_codex_edit_sends_the_placeholders_of_the_fork() -> None:
    body = request("codex")
    plan, outcome = edit_plan(CODEX_LOG, Policy(), "codex-session")
    assert len(plan.results) == 2
    new = rewritten("openai-responses", body, plan)
    items = codex_input(new)
    outputs = {i["call_id"]: i["output"] for i in items if i["type"] == "function_call_output"}
    for call, text in plan.results.items():
        assert outputs[call] == text and text.startswith(PLACEHOLDER)
    assert body_line(1) not in new.decode() and body_line(3) in new.decode()
    assert items[-1] == codex_input(body)[-1]
    assert pairs_intact([response_entry(i) for i in items])
    assert outcome.preview.tokens_after < outcome.preview.tokens_before


def test_codex_compaction_keeps_the_standing_context_and_the_request() -> None:
    body = request("codex")
    plan, _ = compact_plan(CODEX_LOG, "codex-session", keep_rounds=2)
    assert plan.compact is not None
    before, after = codex_input(body), codex_input(rewritten("openai-responses", body, plan))
    standing = [i for i in before[:3] if i.get("role") in ("developer", "user")]
    assert after[:3] == standing  # developer messages and the environment context
    assert after[3]["content"][0]["text"] == plan.compact.message
    assert after[4] == next(i for i in before if i.get("content") and "file04 and" in str(i))
    assert after[5:] == before[-2:]
    for gone in (1, 2, 3, 4):
        assert body_line(gone) not in json.dumps(after)
    assert pairs_intact([response_entry(i) for i in after])


@pytest.mark.parametrize("keep", [0, 1, 3])
def test_chat_completions_edit_keeps_pairs_and_the_last_results(keep: int) -> None:
    """Chat Completions (no CLI of ours speaks it): the Codex request's conversation as chat
    messages, under the Codex session's plan."""
    items = codex_input(request("codex"))
    messages: list[dict[str, Any]] = []
    for item in items:
        if item["type"] == "function_call":
            call = {"id": item["call_id"], "type": "function"}
            call["function"] = {"name": item["name"], "arguments": item["arguments"]}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif item["type"] == "function_call_output":
            messages.append(
                {"role": "tool", "tool_call_id": item["call_id"], "content": item["output"]}
            )
        else:
            text = "\n".join(part["text"] for part in item["content"])
            messages.append({"role": item["role"], "content": text})
    body = json.dumps({"model": "gpt-5", "messages": messages}).encode()
    plan, _ = edit_plan(CODEX_LOG, Policy(keep_tool_uses=keep), "codex-session")
    after = json.loads(rewritten("openai-chat", body, plan))["messages"]
    assert after[-1] == messages[-1]
    cleared = [m for m in after if m["role"] == "tool" and m["content"].startswith(PLACEHOLDER)]
    assert len(cleared) == min(5 - keep, 4)


def test_cleared_inputs_replace_the_calls_arguments_but_not_the_last_ones() -> None:
    """A plan that also clears inputs (``--clear-inputs``): the calls' arguments become the
    plan's, as the fork writes them, except in the model's last message."""
    plan, _ = edit_plan(CODEX_LOG, Policy(keep_tool_uses=0), "codex-session")
    calls = [i["call_id"] for i in codex_input(request("codex")) if i["type"] == "function_call"]
    cleared = {call: {"cmd": "[ctxtop: input cleared]"} for call in calls}
    plan = dataclasses.replace(plan, inputs=cleared)
    after = codex_input(rewritten("openai-responses", request("codex"), plan))
    arguments = [i["arguments"] for i in after if i["type"] == "function_call"]
    assert arguments[:-1] == ['{"cmd":"[ctxtop: input cleared]"}'] * (len(calls) - 1)
    assert arguments[-1] == '{"cmd": "cat file05.txt"}'  # the round in progress, as sent
    claude, _ = edit_plan(CLAUDE_LOG, Policy(keep_tool_uses=0), CLAUDE_LOG.stem)
    uses = [
        b["id"]
        for m in claude_messages(request("claude-code"))
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "tool_use"
    ]
    claude = dataclasses.replace(claude, inputs={use: {"command": "[cleared]"} for use in uses})
    messages = claude_messages(rewritten("anthropic", request("claude-code"), claude))
    inputs = [
        b["input"]
        for m in messages
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "tool_use"
    ]
    assert inputs[:-1] == [{"command": "[cleared]"}] * (len(uses) - 1)
    assert inputs[-1] != {"command": "[cleared]"}

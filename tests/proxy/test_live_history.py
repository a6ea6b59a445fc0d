"""A live compaction plan applies only to a request that holds the history the plan was made
from: the rounds it summarises, recognised by their content (the model's text and call ids),
not by counting rounds from the start of whatever arrives. Any other request under the same
session id passes as the agent sent it: a sub-agent's conversation, the agent's own conversation
after it compacted by itself, a side request.

The sessions here have text rounds only (no tool calls, so no call id to recognise them by):
Claude Code records and requests shaped as the real 2.1.197's in ``tests/proxy/data/live``
(their envelopes copied from there), with other texts."""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any

from ctxtop.engine.live.apply_plan import compact_plan
from ctxtop.engine.proxy.live_plan import LivePlan, save_plan
from ctxtop.engine.proxy.rewrite_live import LiveRewriter, rewrite_body

DATA = Path(__file__).resolve().parent / "data" / "live" / "claude-code"
REAL_LOG = next(DATA.glob("*-*-*.jsonl"))
REAL_REQUEST = json.loads((DATA / "request.json").read_bytes())
SESSION = "5d0c1f7e-3a64-4e0b-9a51-2f1f3c9b7d20"
TURNS = 5  # rounds 1-3 summarised, 4-5 kept (keep_rounds=2)


def question(number: int) -> str:
    return f"Question {number}: what does step {number} of the build do?"


def answer(number: int, who: str = "main") -> str:
    # Long enough that summarising three of them makes the context smaller (a compaction
    # that would not be smaller is refused).
    checks = " ".join(f"Check {number}.{k} of module {number * 31} passed." for k in range(60))
    return f"Step {number} ({who}) compiles module {number * 31} and runs its tests. {checks}"


def _templates() -> tuple[dict[str, Any], dict[str, Any]]:
    """The real log's first prompt record and its text answer record."""
    records = [json.loads(line) for line in REAL_LOG.read_text().splitlines()]
    user = next(r for r in records if r.get("type") == "user")
    said = next(
        r
        for r in records
        if r.get("type") == "assistant" and r["message"]["content"][0]["type"] == "text"
    )
    return user, said


def text_session(directory: Path, turns: int = TURNS) -> Path:
    """A Claude Code log of ``turns`` turns, each a question and a text answer."""
    user, said = _templates()
    lines, parent = [], None
    for number in range(1, turns + 1):
        for template, text in ((user, question(number)), (said, answer(number))):
            record = copy.deepcopy(template)
            record.update(uuid=str(uuid.uuid4()), parentUuid=parent, sessionId=SESSION)
            if record["type"] == "user":
                record["message"]["content"] = text
                record["promptId"] = str(uuid.uuid4())
            else:
                record["message"]["content"] = [{"type": "text", "text": text}]
                record["message"]["id"] = f"msg_text{number:020d}"
            parent = record["uuid"]
            lines.append(json.dumps(record))
    path = directory / f"{SESSION}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def request(first: str, exchanges: list[tuple[str, str]], prompt: str) -> bytes:
    """The real request's shape: the context reminder and ``first`` in the first message, the
    agent-types system message, then each (answer, next user text), then ``prompt`` last."""
    body = copy.deepcopy(REAL_REQUEST)
    reminder = body["messages"][0]["content"][0]
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [reminder, {"type": "text", "text": first}]},
        body["messages"][1],
    ]
    for said, then in exchanges:
        messages.append({"role": "assistant", "content": [{"type": "text", "text": said}]})
        messages.append({"role": "user", "content": then})
    messages[-1]["content"] = prompt
    body["messages"] = messages
    return json.dumps(body).encode()


def main_request(rounds: int) -> bytes:
    """The session's own request after ``rounds`` answered turns, asking the next question."""
    exchanges = [(answer(n), question(n + 1)) for n in range(1, rounds + 1)]
    return request(question(1), exchanges, question(rounds + 1))


def plan(tmp_path: Path) -> LivePlan:
    made, outcome = compact_plan(text_session(tmp_path), SESSION, keep_rounds=2)
    assert made.compact is not None and len(outcome.preview.details.cut.summarised_rounds) == 3
    assert not made.compact.summarised_calls and not made.compact.kept_calls  # text rounds only
    return made


def messages(body: bytes) -> list[dict[str, Any]]:
    return list(json.loads(body)["messages"])


def test_a_plan_of_text_rounds_applies_to_its_own_conversation(tmp_path: Path) -> None:
    made = plan(tmp_path)
    assert made.compact is not None
    body = main_request(TURNS + 1)  # the agent went on after the plan was made
    new = rewrite_body("anthropic", body, made)
    assert new is not None
    after = messages(new)
    head = after[0]["content"]
    assert head[1]["text"] == made.compact.message
    assert head[2:] == [{"type": "text", "text": question(4)}]  # the first kept turn's request
    said = [m["content"][0]["text"] for m in after if m["role"] == "assistant"]
    assert said == [answer(4), answer(5), answer(6)]  # kept and newer rounds, verbatim
    assert after[-1] == messages(body)[-1]


def test_a_sub_agents_request_under_the_same_session_id_is_untouched(tmp_path: Path) -> None:
    """Its first rounds used to be replaced by the parent's summary."""
    made = plan(tmp_path)
    task = "Search the repository for the build scripts and report their steps."
    exchanges = [(answer(n, "sub-agent"), f"Result {n}: ok") for n in range(1, 7)]
    body = request(task, exchanges, "Go on.")
    assert rewrite_body("anthropic", body, made) is None


def test_after_the_agent_compacted_by_itself_its_summary_and_newer_rounds_stay(
    tmp_path: Path,
) -> None:
    """Its own summary and its 4 newer rounds used to be dropped for the plan's summary."""
    made = plan(tmp_path)
    own = "This session is being continued from a previous conversation that ran out of context."
    exchanges = [(answer(n), question(n + 1)) for n in range(7, 11)]
    body = request(own, exchanges, question(11))
    assert rewrite_body("anthropic", body, made) is None


def test_the_rewriter_passes_other_conversations_byte_for_byte(tmp_path: Path) -> None:
    made = plan(tmp_path)
    save_plan(made)
    rewriter = LiveRewriter()
    task = "Summarise the README for me."
    other = request(task, [(answer(n, "other"), "and then?") for n in range(1, 6)], "Next.")
    assert rewriter("anthropic", SESSION, other) is None  # the proxy sends the agent's bytes
    assert rewriter("anthropic", SESSION, main_request(TURNS)) is not None
    older = main_request(3)  # a request from before the plan's kept rounds existed
    assert rewriter("anthropic", SESSION, older) is None


def chat(first: str, exchanges: list[tuple[str, str]], prompt: str) -> dict[str, Any]:
    """A Chat Completions conversation (the generic OpenAI-messages log has the same shape)."""
    listed: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": first},
    ]
    for said, then in exchanges:
        listed += [{"role": "assistant", "content": said}, {"role": "user", "content": then}]
    listed[-1]["content"] = prompt
    return {"model": "gpt-5", "messages": listed}


def test_chat_completions_plan_of_text_rounds_applies_to_its_conversation_only(
    tmp_path: Path,
) -> None:
    log = chat(question(1), [(answer(n), question(n + 1)) for n in range(1, TURNS)], "")
    log["messages"][-1] = {"role": "user", "content": question(TURNS)}
    log["messages"].append({"role": "assistant", "content": answer(TURNS)})
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(log))
    made, outcome = compact_plan(path, "chat-session", keep_rounds=2)
    assert len(outcome.preview.details.cut.summarised_rounds) == 3 and made.compact is not None
    own = chat(question(1), [(answer(n), question(n + 1)) for n in range(1, 7)], question(7))
    new = rewrite_body("openai-chat", json.dumps(own).encode(), made)
    assert new is not None
    said = [m["content"] for m in messages(new) if m["role"] == "assistant"]
    assert said == [answer(4), answer(5), answer(6)]
    sub = chat("Find the build scripts.", [(answer(n, "sub"), "ok") for n in range(1, 7)], "go")
    assert rewrite_body("openai-chat", json.dumps(sub).encode(), made) is None

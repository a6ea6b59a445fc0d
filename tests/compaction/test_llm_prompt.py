"""What the summarising model is shown: the newest messages when the conversation is longer than
its window (the oldest left out, and said so), results after their calls, alternating roles."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from ctxtop.engine.agents.openai_messages.source import OpenAIMessagesSource
from ctxtop.engine.compaction.items import choose_cut
from ctxtop.engine.compaction.prompt import anthropic_messages, openai_messages, transcript


def conversation(tmp_path: Path, rounds: int) -> Any:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be terse."}]
    for n in range(1, rounds + 1):
        call = {
            "id": f"c{n}",
            "type": "function",
            "function": {"name": "run_shell", "arguments": json.dumps({"command": f"ls {n}"})},
        }
        messages += [
            {"role": "user", "content": f"request number {n};"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": f"output {n} " + "y" * 500},
            {"role": "assistant", "content": f"answer {n}"},
        ]  # fmt: skip
    path = tmp_path / "chat.json"
    data = json.dumps(messages).encode()
    path.write_bytes(data)
    return choose_cut(OpenAIMessagesSource(path, data, None).items(), keep_rounds=0)


def test_a_long_conversation_keeps_its_newest_messages(tmp_path: Path) -> None:
    cut = conversation(tmp_path, 10)
    whole = transcript(cut)
    assert "request number 1;" in whole and "left out" not in whole
    short = transcript(cut, limit=2000)
    assert len(short) < len(whole) / 3
    assert "request number 10;" in short and "request number 1;" not in short
    assert "earlier messages are left out to fit the summariser's window" in short
    chat = openai_messages(cut, limit=2000)
    assert "left out" in chat[0]["content"] and chat[-1]["role"] == "user"
    assert "request number 1;" not in json.dumps(chat)


def test_native_messages_put_results_after_their_calls(tmp_path: Path) -> None:
    cut = conversation(tmp_path, 3)
    chat = openai_messages(cut)
    calls = [i for i, m in enumerate(chat) if m.get("tool_calls")]
    assert [chat[i + 1]["tool_call_id"] for i in calls] == ["c1", "c2", "c3"]
    anthropic = anthropic_messages(cut)
    roles = [m["role"] for m in anthropic]
    assert roles[0] == "user" and all(a != b for a, b in itertools.pairwise(roles))
    for index, message in enumerate(anthropic):
        for block in message["content"]:
            if block["type"] == "tool_use":
                following = anthropic[index + 1]["content"]
                results = [b["tool_use_id"] for b in following if b["type"] == "tool_result"]
                assert block["id"] in results

"""The Codex rollout writer on its own, on a rollout built here (``ctxtop edit`` on real Codex
rollouts, through the Codex reader: test_edit_codex.py)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ctxtop.engine.agents.codex.writer import CodexWriter, is_codex

OLD = "01a20397-a65f-7be0-a82b-63e59b296bcb"
NEW = "0b4e0c1f-2d8a-4a8e-9f5e-3d1c2b7a9e11"


def _item(payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-11-22T14:10:00.000Z", "type": "response_item", "payload": payload}


def _user(text: str) -> dict[str, Any]:
    return _item(
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    )


def _call(n: int, cmd: str, output: str) -> list[dict[str, Any]]:
    return [
        _item(
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": cmd}),
                "call_id": f"call_{n}",
            }
        ),
        _item({"type": "function_call_output", "call_id": f"call_{n}", "output": output}),
    ]


def _rollout(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    meta = {"type": "session_meta", "payload": {"id": OLD, "session_id": OLD, "cwd": "/home/dev/x"}}
    path = tmp_path / f"rollout-2026-11-22T14-09-59-{OLD}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [meta, *records]), encoding="utf-8")
    return path


def test_codex_fork_replaces_the_output_and_the_id(tmp_path: Path) -> None:
    big = "\n".join(f"row {i}" for i in range(200))
    path = _rollout(
        tmp_path,
        [
            _user("<environment_context>cwd</environment_context>"),
            _user("dump it"),
            *_call(1, "cat big.txt", big),
            _user("again"),
            *_call(2, "ls", "a\nb"),
            {"type": "event_msg", "payload": {"type": "token_count", "thread_id": OLD}},
        ],
    )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    writer = CodexWriter(path, path.read_bytes())
    scan = writer.scan()
    assert scan.turns == 2  # the injected environment message is not a user turn
    assert [(u.call_id, u.turn) for u in scan.uses] == [("call_1", 1), ("call_2", 2)]
    data = writer.render({"call_1": "[cleared]"}, {}, NEW)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    assert is_codex(data)
    assert OLD not in data.decode() and big not in data.decode()
    records = [json.loads(line) for line in data.decode().splitlines()]
    assert records[0]["payload"]["id"] == NEW == records[0]["payload"]["session_id"]
    payloads = [r["payload"] for r in records if r["type"] == "response_item"]
    outputs = {p["call_id"]: p["output"] for p in payloads if p["type"] == "function_call_output"}
    calls = [p["call_id"] for p in payloads if p["type"] == "function_call"]
    assert outputs == {"call_1": "[cleared]", "call_2": "a\nb"} and calls == ["call_1", "call_2"]
    assert writer.fork_name(NEW).startswith("rollout-") and writer.fork_name(NEW).endswith(
        f"-{NEW}.jsonl"
    )
    assert writer.resume_command(NEW, None) == f"codex resume {NEW}"


def test_codex_after_compaction_only_the_replacement_history_counts(tmp_path: Path) -> None:
    history = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "call_9"},
        {"type": "function_call_output", "call_id": "call_9", "output": "kept in history"},
    ]
    path = _rollout(
        tmp_path,
        [
            _user("first"),
            *_call(1, "ls", "before the compaction"),
            {
                "type": "compacted",
                "payload": {"message": "summary", "replacement_history": history},
            },
            _user("next"),
        ],
    )
    writer = CodexWriter(path, path.read_bytes())
    assert [u.call_id for u in writer.scan().uses] == ["call_9"]
    data = writer.render({"call_9": "[cleared]"}, {}, NEW).decode()
    assert "kept in history" not in data and "[cleared]" in data

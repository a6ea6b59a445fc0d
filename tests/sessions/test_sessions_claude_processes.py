"""Where a new Claude Code process took the next prompt of a session (``-p --resume`` runs one
process per prompt; its queue records mark it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxtop.engine.agents.session_reader import read_session

DATA = Path(__file__).parent / "data"
GENERATED = DATA / "generated" / "claude-code"
CLI_2_1_330 = DATA / "real" / "claude-code" / "generated-cli-2.1.330" / "projects"


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def prompt_queue_lines(path: Path, operation: str) -> list[int]:
    """Lines of the queue records that hand the user's own prompts over."""
    return [
        number
        for number, row in enumerate(rows(path), 1)
        if row.get("type") == "queue-operation"
        and row.get("operation") == operation
        and not str(row.get("content", "")).startswith("<task-notification>")
    ]


def test_each_resumed_run_is_a_process_start() -> None:
    # calc-main: five `claude -p` runs (the first, two resumes, /compact, one more prompt).
    path = next((GENERATED / "calc-main").glob("*.jsonl"))
    starts = read_session(path).process_starts
    assert starts == prompt_queue_lines(path, "enqueue") and len(starts) == 5


def test_claude_code_2_0_logs_the_dequeue_alone() -> None:
    path = next((GENERATED / "calc-legacy-2-0-77").glob("b8dbf70f-*.jsonl"))
    assert prompt_queue_lines(path, "enqueue") == []
    starts = read_session(path).process_starts
    assert starts == prompt_queue_lines(path, "dequeue") and len(starts) == 3


def test_a_task_notification_the_agent_queued_for_itself_is_no_process_start() -> None:
    path = next(CLI_2_1_330.rglob("b7f51370-*.jsonl"))
    notifications = [
        number
        for number, row in enumerate(rows(path), 1)
        if str(row.get("content", "")).startswith("<task-notification>")
    ]
    starts = read_session(path).process_starts
    assert notifications and not set(notifications) & set(starts)
    assert starts == prompt_queue_lines(path, "enqueue")


def test_a_prompt_queued_while_a_turn_runs_is_no_process_start(tmp_path: Path) -> None:
    """Interactive: what the user types during a turn is queued, and taken when it ends."""
    session = "11111111-2222-3333-4444-555555555555"

    def record(kind: str, uuid: str, parent: str | None, content: Any) -> dict[str, Any]:
        message: dict[str, Any] = {"role": kind, "content": content}
        if kind == "assistant":
            message.update(id=f"msg_{uuid}", model="claude-sonnet-4-5", usage={"input_tokens": 9})
        return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": session,
                "timestamp": "2026-11-22T16:00:00Z", "message": message}  # fmt: skip

    def queue(operation: str) -> dict[str, Any]:
        return {"type": "queue-operation", "operation": operation, "sessionId": session,
                "timestamp": "2026-11-22T16:00:00Z", "content": "and the tests too"}  # fmt: skip

    call = [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]
    result = [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py"}]
    lines = [
        record("user", "u1", None, "fix the bug"),
        queue("enqueue"),  # typed while the model thinks about the first prompt
        record("assistant", "a1", "u1", call),
        record("user", "u2", "a1", result),
        record("assistant", "a2", "u2", [{"type": "text", "text": "Fixed."}]),
        queue("dequeue"),
        record("user", "u3", "a2", "and the tests too"),
    ]
    path = tmp_path / f"{session}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    state = read_session(path)
    assert state.agent == "claude-code" and state.api_requests == 2
    assert state.process_starts == []


def test_a_prompt_removed_from_the_queue_is_no_longer_waiting(tmp_path: Path) -> None:
    """2.1.33x: a prompt typed during a turn may leave the queue by ``remove`` (the running turn
    took it as a ``queued_command`` attachment), not by ``dequeue``: nothing is queued after it,
    so a later dequeue alone (a new process, 2.0.x's way) is a process start."""
    session = "11111111-2222-3333-4444-666666666666"
    at = "2026-11-28T00:00:00Z"

    def record(kind: str, uuid: str, parent: str | None, content: Any) -> dict[str, Any]:
        message: dict[str, Any] = {"role": kind, "content": content}
        if kind == "assistant":
            message.update(id=f"msg_{uuid}", model="claude-opus-5-5", usage={"input_tokens": 9})
        return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": session,
                "timestamp": at, "message": message}  # fmt: skip

    def queue(operation: str) -> dict[str, Any]:
        return {"type": "queue-operation", "operation": operation, "sessionId": session,
                "timestamp": at, "content": "and the tests too"}  # fmt: skip

    call = [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]
    result = [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py"}]
    lines = [
        record("user", "u1", None, "fix the bug"),
        record("assistant", "a1", "u1", call),
        queue("enqueue"),  # typed during the turn
        record("user", "u2", "a1", result),
        queue("remove"),  # the turn took it along with the tool result
        record("assistant", "a2", "u2", [{"type": "text", "text": "Fixed, tests too."}]),
        queue("dequeue"),  # the next process's prompt
        record("user", "u3", "a2", "now commit"),
    ]
    path = tmp_path / f"{session}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    state = read_session(path)
    assert state.process_starts == [7]

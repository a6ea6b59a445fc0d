"""Claude Code writes one API response as one line per content block, each repeating the usage
(agent-log-formats.md §1.5): the lines are one request, revised only when the figures change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.sessions.model import Usage


def _line(uuid: str, parent: str | None, kind: str, message: dict[str, Any]) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "type": kind,
        "uuid": uuid,
        "timestamp": f"2026-11-28T00:00:{len(uuid):02d}.000Z",
        "sessionId": "s1",
        "message": message,
    }


def _answer(uuid: str, parent: str, key: str, block: dict[str, Any], output: int) -> Any:
    usage = {"input_tokens": 10, "cache_read_input_tokens": 900, "output_tokens": output}
    message = {"role": "assistant", "id": key, "model": "claude-opus-5-5", "content": [block]}
    return _line(uuid, parent, "assistant", {**message, "usage": usage})


def test_a_response_logged_block_by_block_is_one_request(tmp_path: Path) -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "text of a"}
    lines = [
        _line("u1", None, "user", {"role": "user", "content": "Read a."}),
        _answer("a1", "u1", "msg_1", {"type": "thinking", "thinking": "Reading."}, 5),
        _answer("a2", "a1", "msg_1", {"type": "text", "text": "I will read it."}, 5),
        _answer("a3", "a2", "msg_1", call, 5),
        _line("u2", "a3", "user", {"role": "user", "content": [result]}),
        _answer("b1", "u2", "msg_2", {"type": "text", "text": "It says 'text'."}, 7),
        _answer("b2", "b1", "msg_2", {"type": "text", "text": "Done."}, 9),  # the final count
    ]
    path = tmp_path / "s1.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    state = read_all(SessionReader(path))
    # msg_1's three lines are one request, msg_2's second line revises its output.
    assert list(state.request_changes) == [0, 1, 1]
    assert list(state.request_sizes) == [915, 919]
    assert state.totals == Usage(20, 14, 1800)
    assert [m.response_key for m in state.context] == [None, *["msg_1"] * 3, None, *["msg_2"] * 2]
    assert state.last_response is not None and state.last_response.key == "msg_2"
    assert state.last_response.usage == Usage(10, 9, 900)

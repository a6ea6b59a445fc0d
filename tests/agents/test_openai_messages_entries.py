"""OpenAI messages' typed record stream (engine/agents/openai_messages/entries.py): what a line
is, read from the bundled sample logs, and made once per line for an edit or a compaction."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ctxtop.engine.agents.openai_messages import reader
from ctxtop.engine.agents.openai_messages.entries import Entry, entry
from ctxtop.engine.agents.openai_messages.reader import OpenAIMessagesAdapter
from ctxtop.engine.agents.openai_messages.writer import OpenAIMessagesWriter
from ctxtop.engine.agents.session_reader import read_session
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks.compact import preview_compact
from ctxtop.engine.forks.edit import preview_edit
from ctxtop.engine.forks.transaction import EDITING, load

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions" / "openai-messages"
AGENT_LOOP = SAMPLES / "agent-loop.jsonl"


def lines_of(path: Path) -> list[Entry]:
    return [entry(json.loads(line), n) for n, line in enumerate(path.open("rb"), 1)]


def test_the_lines_of_an_agent_loop() -> None:
    system, request, call, result, *_ = lines_of(AGENT_LOOP)
    assert (system.kind, system.role) == ("message", "system")
    assert (request.kind, request.role) == ("message", "user")  # a turn starts
    assert [part.text for part in request.parts] == ["Why does `make test` fail? Fix it."]
    assert (call.role, call.own_id, call.model) == ("assistant", "resp_01", "gpt-5")
    assert call.calls is not None and len(call.calls) == 1
    tool = call.calls[0]
    assert (tool.own_id, tool.name, tool.arguments) == (
        "call_a1",
        "run_shell",
        '{"command": "make test"}',
    )
    # the fork writer and the compaction take the input as written
    assert (tool.written_id, tool.function_name, tool.input) == (
        "call_a1",
        "run_shell",
        '{"command": "make test"}',
    )
    assert call.usage is not None
    assert (call.usage.input_tokens, call.usage.output_tokens) == (1204, 96)
    assert call.usage.reasoning_tokens == 64
    assert (result.role, result.answers, result.written_answers) == ("tool", "call_a1", "call_a1")
    assert result.parts[0].text.startswith("pytest -q\nF..\nFAILED tests/test_todo.py")
    assert result.usage is None and result.calls == ()


def test_a_later_response_splits_its_cached_prompt() -> None:
    second = lines_of(AGENT_LOOP)[4]
    assert second.usage is not None
    assert (second.usage.input_tokens, second.usage.cache_read_tokens) == (1352 - 1152, 1152)


def test_a_document_holding_messages_is_one_entry_with_entries_inside(tmp_path: Path) -> None:
    messages = json.loads((SAMPLES / "demo-chat.json").read_text(encoding="utf-8"))
    held = entry({"model": "gpt-4.1", "messages": messages}, 1)
    assert (held.kind, held.model, held.holds_messages) == ("envelope", "gpt-4.1", True)
    assert held.messages is not None
    assert [m.role for m in held.messages] == [m["role"] for m in messages]
    assert [m.record for m in held.messages] == messages


def test_a_document_session_is_read_written_and_compacted(tmp_path: Path) -> None:
    """A .json session (one document, no lines decoded up front): the reader and the writer
    make its messages' entries themselves."""
    source = tmp_path / "demo-chat.json"
    shutil.copyfile(SAMPLES / source.name, source)
    state = read_session(source)
    loaded = load(source, EDITING, None, None)
    assert loaded.records is None
    writer = loaded.writer(OpenAIMessagesWriter)
    container, messages = writer.document()
    assert container is None and len(messages) == len(state.context)
    scan = writer.scan()
    calls = [b.tool_call_id for m in state.context for b in m.blocks if b.kind == "tool_use"]
    assert [use.call_id for use in scan.uses] == calls
    assert all(use.result for use in scan.uses)
    preview = preview_edit(loaded, Policy(keep_turns=0))
    assert preview.details.changed


ODD = [
    None,
    5,
    1.5,
    True,
    "x",
    [],
    [{"role": "user"}],
    {},
    {"role": 5},
    {"role": ["user"], "content": "hi"},
    {"role": {"name": "user"}},
    {"role": "bot", "type": "note"},
    {"role": "assistant", "tool_calls": 5, "content": 7, "usage": "x", "id": 0},
    {"role": "assistant", "tool_calls": [5, {"function": "f"}, {}], "content": [1, None, {}]},
    {"role": "tool", "tool_call_id": [1], "content": {"a": 1}},
    {"role": "user", "content": [{"type": "image_url"}, {"type": "file", "file": 3}]},
    {"messages": 5},
    {"messages": "ab", "model": 5},
    {"messages": [None, {"role": []}, {"messages": []}]},
]


@pytest.mark.parametrize("value", ODD, ids=repr)
def test_any_value_is_an_entry(value: Any) -> None:
    found = entry(value, 7)
    assert isinstance(found, Entry) and found.record is value
    assert found.kind == (
        "value"
        if not isinstance(value, dict)
        else "message"
        if value.get("role") in ("user", "assistant", "tool")
        else "envelope"
        if "messages" in value
        else "object"
    )
    # every fact a consumer asks of it is there
    assert isinstance(found.unknown_type, str | None) and isinstance(found.is_object, bool)
    assert isinstance(found.holds_messages, bool) and isinstance(found.logs_usage, bool)
    if found.kind == "message":
        assert isinstance(found.images, int) and isinstance(found.files, list)
        for call in found.calls or ():
            assert isinstance(call.name, str) and isinstance(call.written_id, str)


def test_tool_calls_that_are_a_number_are_said_so() -> None:
    """(The reader skips such a message as an unexpected shape, as it always did.)"""
    assert entry({"role": "assistant", "tool_calls": 5}, 1).calls is None
    assert entry({"role": "assistant", "tool_calls": "ab"}, 1).calls == ()


def test_an_edit_and_a_compaction_make_each_lines_entry_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / AGENT_LOOP.name
    shutil.copyfile(AGENT_LOOP, source)
    made: list[tuple[int, int]] = []  # (the value's id, its line)

    def counting(record: Any, line: int) -> Entry:
        made.append((id(record), line))
        return entry(record, line)

    monkeypatch.setattr(OpenAIMessagesAdapter, "entry", staticmethod(counting))
    monkeypatch.setattr(OpenAIMessagesWriter, "entry_of", staticmethod(counting))
    monkeypatch.setattr(reader, "entry", counting)  # (a line fed as a value)
    loaded = load(source, EDITING, None, None)
    assert loaded.records is not None
    preview = preview_edit(loaded, Policy(keep_turns=0))
    compacted = preview_compact(loaded, keep_rounds=1)
    assert preview.details.changed and compacted.kind == "compact"
    values = {id(record): line for line, record in enumerate(loaded.records, 1)}
    session_lines = [line for value, line in made if values.get(value) == line]
    assert session_lines == list(range(1, len(loaded.records) + 1))

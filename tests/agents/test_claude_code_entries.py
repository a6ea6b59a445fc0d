"""Claude Code's typed record stream (engine/agents/claude_code/entries.py): what a line of a real
transcript is, the same for the reader, the fork writer and the compaction source; any decoded
value is an entry; and an edit or compaction preview makes each line's entry once."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import pytest

from ctxtop.engine.agents.claude_code import entries as claude_entries
from ctxtop.engine.agents.claude_code import history as lean
from ctxtop.engine.agents.claude_code import reader as claude_reader
from ctxtop.engine.agents.claude_code import writer as claude_writer
from ctxtop.engine.agents.claude_code.entries import Entry, entry, is_request_text, usage_from
from ctxtop.engine.agents.claude_code.reader import ClaudeCodeAdapter
from ctxtop.engine.agents.claude_code.writer import ClaudeCodeWriter
from ctxtop.engine.agents.session_reader import read_session
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks.compact import preview_compact
from ctxtop.engine.forks.edit import preview_edit
from ctxtop.engine.forks.transaction import COMPACTING, EDITING, load

ROOT = Path(__file__).resolve().parents[2]
PROJECTS = ROOT / "sample_sessions/claude-code/projects"
# Claude Code 2.1.x: prompts, tool calls and results, a /compact, prompt snapshots
MAIN = PROJECTS / "-home-dev-projects-calc-main/ff656323-5d3c-47d4-a01f-e8bc70c19faf.jsonl"
# 1.0.x: sub-agent turns inline as sidechain lines
INLINE = PROJECTS / "-path-to-Demo/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"


def _lines(path: Path) -> dict[int, Entry]:
    return {
        number: entry(json.loads(raw), number)
        for number, raw in enumerate(path.read_bytes().splitlines(), 1)
    }


def test_a_prompt_a_call_and_its_result() -> None:
    lines = _lines(MAIN)
    prompt = lines[3]
    assert (prompt.kind, prompt.type) == ("message", "user")
    assert prompt.starts_turn() and prompt.opens_turn()
    assert prompt.prompt is not None and prompt.prompt.startswith("The div function in src/calc")
    assert is_request_text(prompt.text) and prompt.is_request()

    call = lines[24]
    assert call.type == "assistant" and call.response_id is not None
    [created] = call.calls()
    assert (created.call_id, created.name) == ("toolu_01f1209bded3d04bfcbbe214", "TaskCreate")
    assert created.input["subject"].startswith("Handle division by zero")
    assert call.opens_turn()  # the model owes a response after its tool call
    assert [block.tool_name for block in call.blocks or [] if block.kind == "tool_use"] == [
        "TaskCreate"
    ]

    result = lines[26]
    [answer] = result.results()
    assert answer.call_id == created.call_id and not answer.is_error
    assert answer.edited_text.startswith("Task #1 created successfully")
    assert answer.summarised_text == answer.edited_text
    assert not result.starts_turn()  # tool results continue the turn
    assert result.opens_turn()
    assert result.parent == call.uuid  # the chain as written


def test_a_compaction_its_summary_and_the_clis_own_lines() -> None:
    lines = _lines(MAIN)
    boundary = lines[121]
    assert (boundary.kind, boundary.subtype) == ("compaction", "compact_boundary")
    assert boundary.compact_metadata["trigger"] == "manual"
    assert boundary.preserved == (
        "54df4982-a2cc-4da0-9d2a-cc761c12006f",
        ["672ec664-5dd7-4598-b24c-9ad7278d9fe1"],
    )
    summary = lines[122]
    assert summary.compact_summary and not summary.starts_turn() and not summary.opens_turn()
    caveat = lines[123]
    assert caveat.meta and not caveat.starts_turn()
    # A slash command's echo starts a turn of the edit screen, but is no request of the user's
    # to a compaction, and tells the process bookkeeping no prompt was typed.
    command = lines[124]
    assert command.starts_turn()
    assert not command.is_request() and not command.opens_turn()
    assert lines[142].is_request() and lines[142].starts_turn()


def test_snapshots_requests_and_metadata() -> None:
    lines = _lines(MAIN)
    assert lines[14].kind == "snapshot" and lines[14].blocks is None  # the prompt sent, no message
    assert lines[4].kind == "attachment" and lines[4].blocks
    # What a compaction keeps as standing context, and a file it names to re-read.
    assert (lines[4].attachment_label, lines[4].standing) == ("environment", True)
    assert (lines[12].attachment_label, lines[12].standing) == ("date", False)
    assert lines[126].attached_file is not None and not lines[126].standing
    assert lines[18].kind == "request" and lines[15].kind == "request"
    assert lines[1].kind == "metadata" and lines[1].queue[0] in ("enqueue", "dequeue")
    assert all(line.session_id == lines[3].session_id for line in lines.values() if line.uuid)


def test_inline_sidechains_and_a_subagents_own_log() -> None:
    lines = list(_lines(INLINE).values())
    sidechains = [line for line in lines if line.sidechain]
    assert sidechains and all(line.type in ("user", "assistant") for line in sidechains)
    assert not claude_entries.is_subagent_log(lines)  # the main session: sidechains are others'
    own = sorted(PROJECTS.glob("-home-dev-projects-calc-subagent/*/subagents/agent-*.jsonl"))[0]
    assert claude_entries.is_subagent_log(_lines(own).values())


ODD = [
    None,
    3,
    "text",
    [],
    [1, {"type": "user"}],
    {},
    {"type": 5},
    {"type": "user"},
    {"type": "user", "message": "not an object", "uuid": 7},
    {"type": "assistant", "message": {"content": 5, "usage": "lots", "id": 9}},
    {"type": "assistant", "message": {"content": [None, 1, {"type": "tool_use"}]}},
    {"type": "user", "message": {"content": [{"type": "tool_result", "content": {"x": 1}}]}},
    {"type": "system", "subtype": [1], "compactMetadata": "x"},
    {"type": "system", "subtype": "compact_boundary", "compactMetadata": {"preservedMessages": 1}},
    {"type": "system", "subtype": "microcompact_boundary", "microcompactMetadata": []},
    {"type": "attachment", "attachment": 5, "rendered": [None, {"content": 3}]},
    {"type": "custom-title", "customTitle": ["x"]},
    {"type": "content-replacement", "replacements": "x"},
    {"type": "queue-operation", "operation": {}},
    {"type": "api-request", "params": {"betas": "context-1m"}},
]
_ASKED = [
    "content",
    "parts",
    "prompt",
    "text",
    "images",
    "api_error",
    "model",
    "usage",
    "response_key",
    "response_id",
    "usage_is_ctxtops",
    "copied",
    "requested_model",
    "compact_metadata",
    "ctxtop_mark",
    "preserved",
    "microcompact_metadata",
    "cleared",
    "cleared_attachments",
    "title",
    "attachment_type",
    "attached_file",
    "agent_id",
    "replacements",
    "betas",
    "queue",
    "attachment_label",
    "standing",
]


@pytest.mark.parametrize("value", ODD, ids=repr)
def test_any_decoded_value_is_an_entry(value: Any) -> None:
    """A line of any shape is an entry (never an exception), whatever a consumer asks of it."""
    made = entry(value, 1)
    assert made.record is value
    assert made.kind == ("bad-shape" if not isinstance(value, dict) else made.kind)
    if isinstance(value, dict) and not isinstance(value.get("type"), str):
        assert made.kind == "untyped"
    for name in _ASKED:
        getattr(made, name)
    made.starts_turn(), made.opens_turn(), made.is_request()
    made.calls(), made.results(), made.spawns()


def test_odd_lines_are_read_as_before(tmp_path: Path) -> None:
    """The reader's skips and unknown types for odd lines in a real session are the ones it
    gave before the entries (main at 36c7c4a), line by line."""
    lines = MAIN.read_bytes().splitlines()
    odd = [json.dumps(value).encode() for value in ODD]
    path = tmp_path / MAIN.name
    path.write_bytes(b"\n".join([*lines[:30], *odd, *lines[30:]]) + b"\n")
    state = read_session(path)
    assert [(skip.line, skip.reason) for skip in state.skipped] == [
        *((line, "not a JSON object") for line in (32, 33, 34, 35)),
        (38, "user record without a uuid"),
        (39, "user record without a uuid"),
        (40, "assistant record without a uuid"),
        (41, "assistant record without a uuid"),
        (42, "user record without a uuid"),
        (43, "unexpected record shape (TypeError)"),  # a system line's subtype a list
        (44, "system record without a uuid"),
        (45, "system record without a uuid"),
        (46, "attachment record without a uuid"),
    ]
    assert state.unknown_types == {"(no type)": 2, "attachment:?": 1}
    assert (state.title, state.context_window, len(state.context)) == (None, None, 23)


@pytest.mark.parametrize("doing", [EDITING, COMPACTING])
def test_a_preview_makes_each_lines_entry_once(
    doing: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """load() makes the entries once: the reader, the fork writer's scan and render and the
    compaction source's items take them (a fork's own lines, read back, are the fork's)."""
    path = tmp_path / MAIN.name
    shutil.copyfile(MAIN, path)
    made: Counter[int] = Counter()

    def counting(record: Any, line: int) -> Entry:
        made[id(record)] += 1
        return entry(record, line)

    monkeypatch.setattr(ClaudeCodeAdapter, "entry", staticmethod(counting))
    monkeypatch.setattr(ClaudeCodeWriter, "entry_of", staticmethod(counting))
    for module in (claude_reader, claude_writer):  # (a direct call there is counted too)
        monkeypatch.setattr(module, "entry", counting)
    loaded = load(path, doing)
    if doing == EDITING:
        preview_edit(loaded, Policy(keep_turns=1))
        preview_edit(loaded, Policy(keep_turns=0))
    else:
        preview_compact(loaded, keep_rounds=1)
    assert loaded.records is not None
    decoded = [record for record in loaded.records if type(record) is not bytes]
    assert len(decoded) == 167
    assert [made[id(record)] for record in decoded] == [1] * len(decoded)


def _real_lines() -> list[tuple[bytes, Entry]]:
    return [
        (raw, entry(json.loads(raw), number))
        for path in sorted(PROJECTS.rglob("*.jsonl"))
        for number, raw in enumerate(path.read_bytes().splitlines(), 1)
    ]


def test_the_lean_history_reading_answers_as_the_entries_do() -> None:
    """The cold read's lean history reading (history.py) decodes a line its own typed way for
    speed; what a response's usage is and what a line does to the turn come out the same."""
    decode_usage = msgspec.json.Decoder(lean.UsageLine).decode
    usages = turns = 0
    for raw, line in _real_lines():
        if isinstance(line.usage, dict):
            assert decode_usage(json.dumps(line.usage)).normalised() == usage_from(line.usage)
            usages += 1
        if line.type in ("user", "assistant") and line.message is not None:
            decoded = lean.decode_line(raw)
            assert decoded.message is not None
            content = lean.content_of(decoded.message, str(decoded.type), decoded)
            if content is not None:
                assert content.opens_turn == line.opens_turn(), raw[:200]
                turns += 1
    assert usages > 200 and turns > 400

"""Qwen Code's typed record stream (engine/agents/qwen_code/entries.py): what each line of the
bundled real session is, that any decoded value is an entry (never an error), and that an edit
or compaction preview makes each line of the session an entry once, for the session reader, the
fork writer and the compaction source together."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxtop.engine.agents.qwen_code.entries import SNAPSHOT_TAG, QwenEntry, entry
from ctxtop.engine.agents.qwen_code.reader import QwenCodeAdapter
from ctxtop.engine.agents.qwen_code.writer import QwenCodeWriter
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks.compact import preview_compact
from ctxtop.engine.forks.edit import preview_edit
from ctxtop.engine.forks.transaction import COMPACTING, EDITING, load

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = next((ROOT / "sample_sessions" / "qwen-code" / "projects").rglob("chats/*.jsonl"))
RECORDS = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
ENTRIES = [entry(record, line) for line, record in enumerate(RECORDS, 1)]


def _first(test: Any) -> QwenEntry:
    return next(found for found in ENTRIES if test(found))


def test_a_user_request_starts_a_turn() -> None:
    request = ENTRIES[0]
    assert (request.kind, request.type, request.uuid, request.parent) == (
        "message",
        "user",
        RECORDS[0]["uuid"],
        None,
    )
    assert request.message is not None and request.message.starts_turn
    assert request.message.text == RECORDS[0]["message"]["parts"][0]["text"]
    assert (request.session_id, request.cwd) == (RECORDS[0]["sessionId"], RECORDS[0]["cwd"])


def test_an_answer_carries_its_calls_usage_and_model() -> None:
    answer = _first(lambda found: found.type == "assistant")
    raw = answer.record
    assert answer.message is not None and not answer.message.starts_turn
    calls = [part.call for part in answer.message.parts if part.call is not None]
    written = [part["functionCall"] for part in raw["message"]["parts"] if "functionCall" in part]
    assert [(c.id, c.name, c.args) for c in calls] == [
        (w["id"], w["name"], w["args"]) for w in written
    ]
    assert [part.kind for part in answer.message.parts][:2] == ["thought", "text"]
    assert answer.model == raw["model"] and answer.context_window == raw["contextWindowSize"]
    usage = answer.counts.usage() if answer.counts is not None else None
    assert usage is not None and answer.usage_logged
    assert usage.input_tokens_total == raw["usageMetadata"]["promptTokenCount"]


def test_a_result_carries_what_the_tool_told_the_model() -> None:
    result_entry = _first(lambda found: found.type == "tool_result")
    assert result_entry.message is not None
    (part,) = result_entry.message.parts
    written = result_entry.record["message"]["parts"][0]["functionResponse"]
    assert part.kind == "result" and part.result is not None
    assert (part.result.id, part.result.text) == (written["id"], written["response"]["output"])
    calls = {p.call.id for e in ENTRIES if e.message for p in e.message.parts if p.call}
    assert part.result.id in calls


def test_a_compression_carries_its_figures_and_new_history() -> None:
    found = _first(lambda found: found.kind == "compression")
    info = found.record["systemPayload"]["info"]
    assert found.compression is not None and found.compressed is not None
    assert (found.compression.trigger, found.compression.pre_tokens) == (
        "auto",
        info["originalTokenCount"],
    )
    summary = found.compressed[0]
    assert summary.role == "user" and summary.text.startswith(SNAPSHOT_TAG)


def test_telemetry_is_a_step_with_its_call() -> None:
    found = _first(lambda found: found.event is not None)
    event = found.record["systemPayload"]["uiEvent"]
    assert (found.kind, found.ignored, found.system_type) == ("step", True, "system/ui_telemetry")
    assert found.event is not None and found.event.key == event["response_id"]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=20,
)
FIELDS = ("type", "uuid", "parentUuid", "subtype", "message", "systemPayload", "usageMetadata")
KEYS = st.sampled_from(
    [*FIELDS, "parts", "role", "text", "functionCall", "functionResponse", "info", "id", "uiEvent"]
)
SHAPED = st.dictionaries(KEYS, JSON | st.dictionaries(KEYS, JSON), max_size=6)


@given(st.one_of(JSON, SHAPED))
def test_any_value_is_an_entry(value: Any) -> None:
    found = entry(value, 1)
    assert found.record is value
    assert (found.kind == "bad_shape") == (type(value) is not dict)


def test_odd_values_say_what_they_are() -> None:
    kinds = [
        entry(value, 1).kind
        for value in (
            [1],
            {"type": "note", "uuid": "u"},
            {"type": "user", "parentUuid": None},
            {"type": "system", "uuid": "u", "parentUuid": None, "subtype": "custom_title"},
            {"type": "system", "uuid": "u", "parentUuid": 3, "subtype": "chat_compression"},
        )
    ]
    assert kinds == ["bad_shape", "unknown_type", "unlinked", "title", "unlinked"]
    odd = entry(
        {
            "type": "user",
            "uuid": "u",
            "parentUuid": None,
            "message": {"parts": [None, "bare", {"functionCall": {"id": 7}}, {"inlineData": 1}]},
        },
        1,
    )
    assert odd.message is not None
    assert [part.kind for part in odd.message.parts] == ["none", "text", "call", "image"]
    call = odd.message.parts[2].call
    assert call is not None and (call.id, call.key, call.text_id, call.name) == (
        "7",
        "7",
        False,
        "unknown",
    )


def _counted(monkeypatch: pytest.MonkeyPatch) -> Counter[int]:
    """Each value ``entry`` is given, by identity, on the Adapter and the Writer alike."""
    given_values: Counter[int] = Counter()

    def counting(record: Any, line: int) -> QwenEntry:
        given_values[id(record)] += 1
        return entry(record, line)

    monkeypatch.setattr(QwenCodeAdapter, "entry", staticmethod(counting))
    monkeypatch.setattr(QwenCodeWriter, "entry_of", staticmethod(counting))
    return given_values


def _session(tmp_path: Path, lines: int | None = None) -> Path:
    chats = tmp_path / "projects" / "p" / "chats"
    chats.mkdir(parents=True)
    path = chats / SAMPLE.name
    if lines is None:
        shutil.copyfile(SAMPLE, path)
    else:
        kept = SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)[:lines]
        path.write_text("".join(kept), encoding="utf-8")
    return path


def test_an_edit_preview_makes_each_line_an_entry_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    given_values = _counted(monkeypatch)
    loaded = load(_session(tmp_path), EDITING)
    assert loaded.records is not None
    session = {id(record) for record in loaded.records}
    assert len(session) == len(RECORDS)
    preview = preview_edit(loaded, Policy(keep_turns=0))
    assert preview.fork_data and loaded.state is not None
    # The session's lines once each (the reader, the scan); the rest: the fork read back.
    assert {key: n for key, n in given_values.items() if key in session} == dict.fromkeys(
        session, 1
    )


def test_a_compaction_preview_makes_each_line_an_entry_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    given_values = _counted(monkeypatch)
    loaded = load(_session(tmp_path, lines=63), COMPACTING)  # (before the last compression)
    assert loaded.records is not None
    session = {id(record) for record in loaded.records}
    preview = preview_compact(loaded, keep_rounds=1)
    assert preview.fork_data
    # The reader, the fork writer and the compaction source's items and fork alike.
    assert {key: n for key, n in given_values.items() if key in session} == dict.fromkeys(
        session, 1
    )

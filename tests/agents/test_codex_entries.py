"""Codex's typed record stream (engine/agents/codex/entries.py): what each rollout line is, read
from the bundled sample the real Codex 0.171 wrote, for any decoded value; and an edit or
compaction preview makes each line's entry once for the reader, the fork writer and the source."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxtop.engine.agents.codex import entries as codex
from ctxtop.engine.agents.codex import reader as codex_reader
from ctxtop.engine.agents.codex.entries import Entry, Item, entry
from ctxtop.engine.agents.codex.reader import CodexAdapter
from ctxtop.engine.agents.codex.source import CodexSource
from ctxtop.engine.agents.codex.writer import CodexWriter
from ctxtop.engine.agents.session_reader import read_session
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks.compact import preview_compact
from ctxtop.engine.forks.edit import preview_edit
from ctxtop.engine.forks.transaction import COMPACTING, EDITING, Loaded, load

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = next((ROOT / "sample_sessions/codex/sessions/2026/11/23").glob("rollout-*.jsonl"))
SUBAGENTS = ROOT / "tests/sessions/data/generated/codex/subagent-0.169/sessions/2026/11/23"


def lines(path: Path = SAMPLE) -> list[tuple[int, dict[str, Any]]]:
    text = path.read_text(encoding="utf-8")
    return [(number, json.loads(line)) for number, line in enumerate(text.splitlines(), 1)]


def first(kind: str, payload_type: str | None = None, **wanted: Any) -> tuple[int, Any]:
    """The sample's first line of ``kind`` (and payload ``type``, and payload fields)."""
    for number, record in lines():
        payload = record["payload"]
        if record["type"] != kind or (payload_type and payload.get("type") != payload_type):
            continue
        if all(payload.get(key) == value for key, value in wanted.items()):
            return number, record
    raise AssertionError(f"no {kind} {payload_type} in the sample")


def test_every_line_of_the_sample_is_a_known_entry_keeping_its_record() -> None:
    for number, record in lines():
        made = entry(record, number)
        assert made.record is record
        assert isinstance(
            made,
            codex.Meta
            | codex.TurnContext
            | codex.WorldState
            | Item
            | codex.Usages
            | codex.Event
            | codex.Compacted,
        )


def test_the_session_meta_says_the_thread_its_cli_and_cwd() -> None:
    number, record = first("session_meta")
    made = entry(record, number)
    assert isinstance(made, codex.Meta)
    assert made.session_id == record["payload"]["id"] and made.session_id in SAMPLE.name
    assert made.cli_version == record["payload"]["cli_version"]
    assert made.cwd == record["payload"]["cwd"]
    assert not made.spawned and made.parent_thread is None


def test_a_user_request_starts_a_turn_and_injected_context_does_not() -> None:
    for number, record in lines():
        payload = record["payload"]
        if payload.get("type") != "message" or payload.get("role") != "user":
            continue
        made = entry(record, number)
        assert isinstance(made, Item) and made.item == "message" and made.role == "user"
        text = payload["content"][0]["text"]
        injected = text.startswith("<environment_context>")
        assert made.injected is injected and made.instructions is injected
        assert made.turn_start is not injected
        assert made.blocks[0].text == text


def test_developer_instructions_are_no_turn() -> None:
    number, record = first("response_item", "message", role="developer")
    made = entry(record, number)
    assert isinstance(made, Item) and made.role == "developer" and not made.turn_start


def test_a_call_and_its_output_by_call_id() -> None:
    number, record = first("response_item", "function_call")
    call = entry(record, number)
    payload = record["payload"]
    assert isinstance(call, Item) and call.item == "call"
    assert (call.call_id, call.name) == (payload["call_id"], payload["name"])
    assert call.input_text == payload["arguments"] == call.logged_input
    number, record = first("response_item", "function_call_output", call_id=payload["call_id"])
    output = entry(record, number)
    assert isinstance(output, Item) and output.item == "output"
    assert output.call_id == call.call_id and output.text == record["payload"]["output"]
    assert not output.failed


def test_a_custom_tool_call_keeps_its_input() -> None:
    number, record = first("response_item", "custom_tool_call")
    made = entry(record, number)
    assert isinstance(made, Item) and made.item == "call"
    assert made.name == record["payload"]["name"]
    assert made.input_text == record["payload"]["input"]


def test_a_compaction_holds_its_replacement_history_as_entries() -> None:
    number, record = first("compacted")
    made = entry(record, number)
    history = record["payload"]["replacement_history"]
    assert isinstance(made, codex.Compacted) and made.history is not None
    assert [item.payload for item in made.history if item is not None] == history
    assert made.summary == record["payload"]["message"]
    assert made.summary.startswith("Another language model")
    assert made.promised is None  # Codex's own, not ctxtop's
    kept_requests = [i for i in made.history if i is not None and i.turn_start]
    assert kept_requests, "the user's requests stay in the history"


def test_usage_records_and_token_counts() -> None:
    number, record = first("token_usage_record")
    made = entry(record, number)
    usage = record["payload"]["usage"]
    assert isinstance(made, codex.Usages) and made.usage is not None
    assert made.response_id == record["payload"]["response_id"]
    assert made.usage.input_tokens_total == usage["input_tokens"]
    assert made.usage.output_tokens == usage["output_tokens"]
    number, record = first("event_msg", "token_count")
    counted = entry(record, number)
    info = record["payload"]["info"]
    assert (
        isinstance(counted, codex.Event) and counted.last is not None and counted.total is not None
    )
    assert counted.total[-1] == info["total_token_usage"]["total_tokens"]
    assert counted.window == info["model_context_window"] and counted.logs_tokens


def test_turn_context_and_world_state() -> None:
    number, record = first("turn_context")
    made = entry(record, number)
    assert isinstance(made, codex.TurnContext) and made.model == record["payload"]["model"]
    number, record = first("world_state")
    assert isinstance(entry(record, number), codex.WorldState)


def test_a_spawned_sub_agent_names_its_parent() -> None:
    for path in sorted(SUBAGENTS.glob("rollout-*.jsonl")):
        number, record = lines(path)[0]
        made = entry(record, number)
        assert isinstance(made, codex.Meta)
        spawn = record["payload"].get("source", {})
        if isinstance(spawn, dict) and "subagent" in spawn:
            parent = spawn["subagent"]["thread_spawn"]["parent_thread_id"]
            assert made.spawned and made.parent_thread == parent
            assert made.description is not None and "Copernicus" in made.description


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (None, codex.NotObject),
        (3, codex.NotObject),
        ("text", codex.NotObject),
        ([{"type": "session_meta"}], codex.NotObject),
        ({}, codex.UnknownType),
        ({"type": 5, "payload": {}}, codex.UnknownType),
        ({"type": ["session_meta"]}, codex.Unreadable),
        ({"type": "response_item"}, codex.BadShape),
        ({"type": "event_msg", "payload": []}, codex.BadShape),
        ({"type": "response_item", "payload": {}}, Item),
        ({"type": "response_item", "payload": {"type": {"a": 1}}}, Item),
        ({"type": "response_item", "payload": {"type": "message", "content": 7}}, Item),
        ({"type": "response_item", "payload": {"type": "function_call_output"}}, Item),
        ({"type": "compacted", "payload": {"replacement_history": [1, None, {}]}}, codex.Compacted),
        ({"type": "compacted", "payload": {"replacement_history": "x"}}, codex.Compacted),
        ({"type": "event_msg", "payload": {"type": "token_count", "info": [1]}}, codex.Event),
        ({"type": "token_usage_record", "payload": {"usage": "many"}}, codex.Usages),
        ({"type": "session_meta", "payload": {"id": 1, "source": {"subagent": 2}}}, codex.Meta),
    ],
)
def test_odd_values_give_entries(value: Any, kind: type[Entry]) -> None:
    made = entry(value, 1)
    assert type(made) is kind and made.record is value


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                ["type", "payload", "role", "content", "call_id", "output", "info", "usage", "text"]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=25,
)
_TYPES = st.sampled_from(
    ["response_item", "event_msg", "compacted", "session_meta", "token_usage_record"]
)


@settings(max_examples=200, deadline=None)
@given(value=_JSON, kind=_TYPES, payload=_JSON)
def test_any_decoded_value_gives_an_entry(value: Any, kind: str, payload: Any) -> None:
    for record in (value, {"type": kind, "payload": payload}):
        made = entry(record, 1)
        assert isinstance(made, Entry) and made.record is record
        if isinstance(made, Item):  # what the writer and the source ask of it
            assert made.turn_start in (True, False) and made.images >= 0
            assert isinstance(made.logged_name, str) and isinstance(made.logged_id, str)
            assert made.output is made.output and made.logged_input is made.logged_input
        if isinstance(made, codex.Event):
            assert made.logs_tokens in (True, False)


def test_a_preview_makes_each_lines_entry_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each decoded line of the session is made an entry once, whoever reads it (the fork the
    preview reads back is another file: its lines are other values)."""
    made: list[tuple[int, Any]] = []

    def counting(record: Any, line: int) -> Any:
        made.append((line, record))
        return entry(record, line)

    # The reader's feed uses the module's function: counted too, should it make entries again.
    monkeypatch.setattr(codex_reader, "entry", counting)
    monkeypatch.setattr(CodexAdapter, "entry", staticmethod(counting))
    monkeypatch.setattr(CodexWriter, "entry_of", staticmethod(counting))

    def session_lines(loaded: Loaded) -> Counter[int]:
        records = loaded.records or []
        return Counter(n for n, got in made if n <= len(records) and got is records[n - 1])

    for doing, previews in (
        (EDITING, [lambda loaded: preview_edit(loaded, Policy(keep_turns=1))]),
        (COMPACTING, [lambda loaded: preview_compact(loaded, keep_rounds=1)] * 2),
    ):
        made.clear()
        loaded = load(SAMPLE, doing)
        for preview in previews:
            preview(loaded)
        decoded = [n for n, r in enumerate(loaded.records or [], 1) if type(r) is not bytes]
        assert len(decoded) > 100
        assert session_lines(loaded) == Counter(decoded)


def test_the_compaction_source_names_the_model_the_dashboard_does(tmp_path: Path) -> None:
    """A turn_context whose model is no name (a number here) is not the model, in any view."""
    _, context = first("turn_context")
    odd = {**context, "payload": {**context["payload"], "model": 5}}
    path = tmp_path / SAMPLE.name
    path.write_bytes(SAMPLE.read_bytes() + json.dumps(odd).encode() + b"\n")
    state = read_session(path)
    assert state.model == context["payload"]["model"]
    assert CodexSource(path, path.read_bytes(), state).model() == state.model

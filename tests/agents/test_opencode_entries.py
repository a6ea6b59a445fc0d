"""OpenCode's typed record stream (engine/agents/opencode/entries.py): what each row the real
CLI wrote (the bundled sample) is, any odd value an entry and never an error, and an edit or
compaction preview making each line's entry once for the reader, the writer and the source."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opencode_db import SESSION, SUBAGENT, load_sample

from ctxtop.engine.agents.opencode import entries
from ctxtop.engine.agents.opencode.entries import Entry, ExportDoc, MessageRow, PartRow, entry
from ctxtop.engine.agents.opencode.export import new_session_id
from ctxtop.engine.agents.opencode.reader import OpenCodeAdapter
from ctxtop.engine.agents.opencode.writer import OpenCodeWriter
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks.compact import preview_compact
from ctxtop.engine.forks.edit import preview_edit
from ctxtop.engine.forks.transaction import COMPACTING, EDITING, load, read_session_bytes
from ctxtop.engine.sessions.json_lines import session_records

KINDS = (entries.SessionRow, MessageRow, PartRow, ExportDoc, entries.OddLine)


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    return load_sample(tmp_path / "opencode.db")


def sample_entries(path: Path) -> list[Entry]:
    records = session_records(read_session_bytes(path))
    assert records is not None
    return [entry(record, line) for line, record in enumerate(records, 1)]


def parts(found: list[Entry], kind: str) -> list[PartRow]:
    return [e for e in found if isinstance(e, PartRow) and e.type == kind]


def test_the_sample_s_rows_are_what_opencode_wrote(sample: Path) -> None:
    found = sample_entries(sample)
    sessions = {e.id: e for e in found if isinstance(e, entries.SessionRow)}
    assert sessions[SESSION].title == "Fix division by zero in calc"
    assert sessions[SESSION].created is not None and sessions[SESSION].version
    assert sessions[SUBAGENT].title == "Find TODO comments (@explore subagent)"
    messages = {e.id: e for e in found if isinstance(e, MessageRow)}
    # The turn starts: the user's own words (not OpenCode's synthetic "Continue...").
    typed = [p for p in parts(found, "text") if messages[p.message_id].role == "user"]
    own = [p.text for p in typed if not p.synthetic and p.session_id == SESSION]
    assert own and own[0] is not None and own[0].startswith('"The div function')
    assert any(p.synthetic for p in typed)
    # A call: its name, input and the 23,000-character result the model was sent.
    calls = [p.call for p in parts(found, "tool") if p.call is not None]
    bash = [c for c in calls if c.name == "bash" and c.output and len(c.output) > 20_000]
    assert len(bash) == 1 and isinstance(bash[0].input, dict) and bash[0].input.get("command")
    assert bash[0].done and not bash[0].is_error
    assert [c.subagent for c in calls if c.name == "task"] == [SUBAGENT]
    # The auto-compaction: its request and the summary call that answered it.
    (asked,) = parts(found, "compaction")
    assert asked.auto
    (summary,) = [m for m in messages.values() if m.summary]
    assert summary.finished and summary.parent_id == asked.message_id
    assert summary.usage is not None and summary.usage.total > 0
    answered = [m for m in messages.values() if m.role == "assistant" and m.usage is not None]
    assert answered and all(m.model for m in answered if m.usage and m.usage.total)
    assert entries.COMPACTION_PROMPT == "What did we do so far?"


def test_an_export_file_is_its_rows(sample: Path, tmp_path: Path) -> None:
    document = json.loads(OpenCodeWriter(sample, read_session_bytes(sample)).render({}, {}, "x"))
    document["info"]["id"] = "ses_export"
    made = entry(document, 1)
    assert isinstance(made, ExportDoc) and made.session_id == "ses_export"
    assert made.broken is None
    rows = sample_entries(sample)
    main_messages = [e for e in rows if isinstance(e, MessageRow) and e.session_id == SESSION]
    exported = [e for e in made.rows if isinstance(e, MessageRow)]
    assert len(exported) == len(main_messages)
    assert [m.role for m in exported] == [m.role for m in sorted(main_messages, key=lambda m: m.id)]


ODD: list[tuple[Any, type, str]] = [
    (None, entries.OddLine, "not-object"),
    (7, entries.OddLine, "not-object"),
    ("text", entries.OddLine, "not-object"),
    ([{"opencode": "message"}], entries.OddLine, "not-object"),
    ({}, entries.OddLine, "bad-row"),
    ({"opencode": "part", "id": "prt_1", "data": "no"}, entries.OddLine, "bad-row"),
    ({"opencode": "message", "id": 5, "data": {}}, entries.OddLine, "bad-row"),
    ({"opencode": "todo", "id": "t", "data": {}}, entries.OddLine, "unknown-table"),
    ({"opencode": "session"}, entries.SessionRow, ""),
    ({"opencode": "message", "id": "m", "data": {"tokens": {"input": "x"}}}, MessageRow, ""),
    ({"opencode": "part", "id": "p", "data": {"type": "tool", "callID": 3}}, PartRow, ""),
    ({"info": {"id": "ses_1"}, "messages": [{"info": {"id": "m"}, "parts": 5}]}, ExportDoc, ""),
]


@pytest.mark.parametrize(("value", "kind", "odd"), ODD)
def test_an_odd_value_is_an_entry_that_says_so(value: Any, kind: type, odd: str) -> None:
    made = entry(value, 3)
    assert isinstance(made, kind)
    if isinstance(made, entries.OddLine):
        assert made.kind == odd and made.record == value
    if isinstance(made, MessageRow):
        assert made.usage is None and made.bad_tokens  # the reader skips it, naming why
    if isinstance(made, PartRow):
        assert made.call is None  # no call id: the reader skips it, naming why
    if isinstance(made, ExportDoc):
        assert made.broken == "TypeError" and len(made.rows) == 2  # its session and message


KEYS = st.sampled_from(
    ["opencode", "id", "data", "type", "role", "tokens", "cache", "input", "state", "callID",
     "tool", "status", "output", "error", "time", "metadata", "ctxtopFork", "info",
     "messages", "parts", "session_id", "message_id", "mime", "text", "created", "model"]
)  # fmt: skip
LEAVES = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
VALUES = st.recursive(
    LEAVES | st.sampled_from(["session", "message", "part", "tool", "ses_1", "completed"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_any_decoded_value_gives_an_entry_never_an_error(value: Any) -> None:
    assert isinstance(entry(value, 1), KINDS)


class Counter:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, record: Any, line: int) -> Entry:
        self.calls += 1
        return entries.entry(record, line)


def test_a_preview_makes_each_line_s_entry_once(
    sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader, the edit's scan and the compaction's items all take the entries load()
    made: one per decoded line in total, not one per line for each."""
    counting = Counter()
    monkeypatch.setattr(OpenCodeAdapter, "entry", staticmethod(counting))
    monkeypatch.setattr(OpenCodeWriter, "entry_of", staticmethod(counting))
    records = session_records(read_session_bytes(sample))
    assert records is not None
    lines = sum(1 for record in records if type(record) is not bytes)
    # (and the fork's own line, its export document, when the preview reads the fork back)
    preview = preview_edit(load(sample, EDITING), Policy(keep_turns=0))
    assert preview.details.changed and preview.fork_data.count(b"\n") == 1
    assert counting.calls == lines + 1
    counting.calls = 0
    compacted = preview_compact(load(sample, COMPACTING), keep_rounds=1)
    assert compacted.details.round_table and compacted.fork_data.count(b"\n") == 1
    assert counting.calls == lines + 1


def test_a_long_export_makes_its_entry_once(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An export file (a fork ctxtop wrote of a long session) is one line: past the first MiB,
    the agent is told from the decoded line (not the head ``agent_of`` reads), and the reader
    and the writer share its one entry."""
    writer = OpenCodeWriter(sample, read_session_bytes(sample))
    document = json.loads(writer.render({}, {}, new_session_id()))
    texts = [
        part
        for message in document["messages"]
        for part in message["parts"]
        if part.get("type") == "text"
    ]
    texts[0]["text"] += " padding" * 200_000  # 1.6 MB
    exported = tmp_path / "exported.json"
    exported.write_text(json.dumps(document) + "\n", encoding="utf-8")  # (as ctxtop writes it)
    assert exported.stat().st_size > 1 << 20
    counting = Counter()
    monkeypatch.setattr(OpenCodeAdapter, "entry", staticmethod(counting))
    monkeypatch.setattr(OpenCodeWriter, "entry_of", staticmethod(counting))
    preview = preview_edit(load(exported, EDITING), Policy(keep_turns=0))
    assert preview.details.changed
    assert counting.calls == 1 + 1  # the export's line, and the fork's read back

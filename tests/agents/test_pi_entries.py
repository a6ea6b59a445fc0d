"""Pi's typed record stream (engine/agents/pi/entries.py): what each line of the real Pi
0.73.1 sample is (a turn's request, a call's name and input, a result's text, the usage of an
answer, the compaction), that any value a line may hold gives an entry rather than an error, and
that an edit or compaction preview makes each line's entry once, for the reader, the fork
writer's scan and the compaction source alike."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxtop.engine.agents.pi.entries import (
    Answer,
    CompactionEntry,
    Header,
    MessageEntry,
    PiEntry,
    ToolResult,
    entry,
)
from ctxtop.engine.agents.pi.reader import PiAdapter
from ctxtop.engine.agents.pi.writer import PiWriter
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks.compact import preview_compact
from ctxtop.engine.forks.edit import preview_edit
from ctxtop.engine.forks.transaction import COMPACTING, EDITING, load

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = next((ROOT / "sample_sessions" / "pi" / "sessions").glob("*/*.jsonl"))
ROWS = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
ENTRIES = [entry(row, line) for line, row in enumerate(ROWS, 1)]


def by_id(entry_id: str) -> PiEntry:
    return next(found for found in ENTRIES if found.id == entry_id)


def row_of(entry_id: str) -> dict[str, Any]:
    return next(row for row in ROWS if row.get("id") == entry_id)


def test_the_header_names_the_session_and_its_directory() -> None:
    header = ENTRIES[0]
    assert isinstance(header, Header)
    assert (header.session_id, header.cwd) == (SAMPLE.stem.split("_")[1], ROWS[0]["cwd"])


def test_a_prompt_is_a_user_message_with_its_text() -> None:
    prompts = [e for e in ENTRIES if isinstance(e, MessageEntry) and e.role == "user"]
    assert [prompt.id for prompt in prompts] == ["fb242c89", "41d8e212", "e7eb5690"]
    assert prompts[1].said() == (
        "Check the first few hundred lines of server.log for anything unusual."
    )
    assert all(prompt.fault is None and prompt.linked for prompt in prompts)


def test_an_answer_carries_its_calls_and_its_usage() -> None:
    answer = by_id("59304c16")
    assert isinstance(answer, Answer)
    calls = answer.calls()
    assert [(call.id, call.name) for call in calls] == [
        ("call_c61f5a90fee44427a84a50ef", "bash"),
        ("call_066a93794b3f437d8c47705e", "read"),
    ]
    assert calls[1].arguments == {"path": "src/calc/ops.py"}
    usage = row_of("59304c16")["message"]["usage"]
    assert answer.tokens == (
        usage["input"],
        usage["output"],
        usage["cacheRead"],
        usage["cacheWrite"],
    )
    assert answer.model == "claude-sonnet-4-5"
    assert [part.kind for part in answer.parts] == ["thinking", "text", "tool_call", "tool_call"]


def test_a_result_carries_its_call_and_text() -> None:
    result = by_id("d5b19ae3")
    assert isinstance(result, ToolResult)
    assert (result.call_id, result.tool_name, result.is_error) == (
        "call_acb74dc4631342eb8e26f5a4",
        "read",
        False,
    )
    [written] = row_of("d5b19ae3")["message"]["content"]
    assert result.text() == result.result_text() == written["text"]
    assert result.text().startswith("import sys\nimport unittest")


def test_the_compaction_names_what_it_keeps() -> None:
    [compaction] = [e for e in ENTRIES if isinstance(e, CompactionEntry)]
    row = ROWS[ENTRIES.index(compaction)]
    assert compaction.summary == row["summary"] and compaction.summary.startswith("## Goal")
    assert (compaction.first_kept, compaction.tokens_before) == ("38ecf513", row["tokensBefore"])
    assert compaction.trigger == "unknown" and compaction.fault is None


def test_every_entry_keeps_its_line_as_written() -> None:
    assert [found.record for found in ENTRIES] == ROWS


ODD_VALUES: list[Any] = [None, 5, -1, 1.5, True, "", "text", [], ["x"], {}, {"a": 1}]


def _paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _paths(inner, (*at, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _paths(inner, (*at, index))


def _replaced(row: Any, at: tuple[Any, ...], value: Any) -> Any:
    if not at:
        return value
    copy = json.loads(json.dumps(row))
    target = copy
    for key in at[:-1]:
        target = target[key]
    target[at[-1]] = value
    return copy


def test_any_value_anywhere_in_a_line_gives_an_entry() -> None:
    """Every field of every sample line (to four levels) replaced by each odd value, or the
    whole line: an entry each time, no exception."""
    made = 0
    for line, row in enumerate(ROWS, 1):
        for at in _paths(row):
            if len(at) > 4:
                continue
            for value in ODD_VALUES:
                assert isinstance(entry(_replaced(row, at, value), line), PiEntry)
                made += 1
    assert made > 5000


@pytest.mark.parametrize(
    ("value", "fault"),
    [
        (["x"], "not a JSON object"),
        ({"type": "message", "id": "a"}, "message entry a without a message role"),
        ({"type": "message", "id": "a", "message": {"role": 5}}, "message entry a without a"),
        ({"type": "compaction", "id": "a", "parentId": None}, "compaction a without a summary"),
        ({"type": "label", "id": ["a"], "parentId": None}, "label entry without an id"),
    ],
)
def test_a_line_the_reader_leaves_out_says_why(value: Any, fault: str) -> None:
    found = entry(value, 1)
    assert found.fault is not None and found.fault.startswith(fault)


@pytest.mark.parametrize("doing", [EDITING, COMPACTING])
def test_a_preview_makes_each_line_s_entry_once(
    doing: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``load`` makes the entries once and the reader, the fork writer's scan and renders and
    the compaction source's items all take them (before: each parsed the records itself)."""
    session = tmp_path / SAMPLE.name
    shutil.copyfile(SAMPLE, session)
    made: list[Any] = []  # the values made entries (kept: their ids stay theirs)

    def counting(record: Any, line: int) -> PiEntry:
        made.append(record)
        return entry(record, line)

    monkeypatch.setattr(PiAdapter, "entry", staticmethod(counting))
    monkeypatch.setattr(PiWriter, "entry_of", staticmethod(counting))
    loaded = load(session, doing)
    if doing == EDITING:
        first = preview_edit(loaded, Policy(keep_turns=1))
        second = preview_edit(loaded, Policy(keep_turns=0))
        assert second.tokens_after < first.tokens_after
    else:
        preview_compact(loaded, keep_rounds=1)
        preview_compact(loaded, keep_rounds=0)
    # Each of the session's lines once (each fork a preview reads back is the fork's own read).
    times = Counter(id(record) for record in made)
    assert loaded.records is not None and len(loaded.records) == len(ROWS)
    assert [times[id(record)] for record in loaded.records] == [1] * len(ROWS)

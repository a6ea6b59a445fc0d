"""OpenCode forks (``ctxtop edit``): an export file for ``opencode import`` in ctxtop's own data
directory, with ids in OpenCode's format, never a write into its database (the real CLI
imports and resumes one: tests/integration/test_resume_opencode.py)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from opencode_db import SESSION, load_sample, sample_rows

from ctxtop.engine.agents import names_fork
from ctxtop.engine.agents.opencode.export import new_session_id, opencode_id
from ctxtop.engine.agents.opencode.writer import OpenCodeWriter
from ctxtop.engine.agents.session_reader import read_session
from ctxtop.engine.cli.main import main
from ctxtop.engine.compaction.handoff import OPENING
from ctxtop.engine.editing.placeholder import MARK
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.editing.undo import undo
from ctxtop.engine.errors import InputError
from ctxtop.engine.forks.compact import compact_session, preview_compact
from ctxtop.engine.forks.edit import edit_session
from ctxtop.engine.forks.transaction import COMPACTING, load, read_session_bytes
from ctxtop.engine.paths import data_dir


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    return load_sample(tmp_path / "opencode.db")


def files_of(database: Path) -> dict[str, str]:
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in database.parent.iterdir()
    }


def time_and_counter(opencode_id_text: str, descending: bool = False) -> tuple[int, int]:
    """The milliseconds (the low 36 bits OpenCode keeps of them) and counter an id holds."""
    value = int(opencode_id_text.split("_")[1][:12], 16)
    if descending:
        value = ~value & ((1 << 48) - 1)
    return divmod(value, 4096)


def test_ids_are_made_as_opencode_makes_them() -> None:
    """The real CLI's own ids come back from their time and counter (a session's descending,
    its messages' and parts' ascending), with 14 base-62 characters after."""
    session = sample_rows("session")[0]
    message = sample_rows("message")[0][0]
    milliseconds, counter = time_and_counter(session[0], descending=True)
    assert (session[-4] - milliseconds) % (1 << 36) < 1000  # made as the session was created
    made = opencode_id("ses", milliseconds, counter, descending=True)
    assert made[:16] == session[0][:16] and len(made) == len(session[0])
    assert opencode_id("msg", *time_and_counter(message))[:16] == message[:16]


def export_of(outcome: dict[str, Any]) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(Path(outcome["fork"]).read_text(encoding="utf-8"))
    return document


def test_an_edit_is_an_export_file_of_ctxtop_s_and_the_database_is_left_alone(
    sample: Path,
) -> None:
    database = sample.parent
    before = files_of(database)
    source = read_session(sample)
    outcome = edit_session(sample, Policy(keep_turns=0)).as_json()
    fork = Path(outcome["fork"])
    assert files_of(database) == before
    assert fork.parent == data_dir().resolve() / "forks" and fork.name.endswith(".json")
    document = export_of(outcome)
    session_id = outcome["session_id"]
    assert document["info"]["id"] == session_id != SESSION
    assert document["info"]["title"] == source.title and document["info"]["agent"] == "build"
    # Every message and part has a new id, ascending in the session's order; links follow.
    old_ids = {row[0] for table in ("message", "part") for row in sample_rows(table)}
    messages = [entry["info"] for entry in document["messages"]]
    ids = [message["id"] for message in messages]
    assert ids == sorted(ids) and not set(ids) & old_ids
    assert {m["parentID"] for m in messages if "parentID" in m} <= set(ids)
    for entry in document["messages"]:
        parts = entry["parts"]
        assert [p["id"] for p in parts] == sorted(p["id"] for p in parts)
        assert {p["messageID"] for p in parts} <= {entry["info"]["id"]}
        assert all(p["sessionID"] == session_id and p["id"] not in old_ids for p in parts)
    # What the model sees again is the session's context with the placeholder.
    cleared = {change["tool_call_id"] for change in outcome["changed"]}
    tools = [p for e in document["messages"] for p in e["parts"] if p.get("callID") in cleared]
    assert tools and all(p["state"]["output"].startswith(MARK) for p in tools)
    fork_state = read_session(fork)
    assert len(fork_state.context) == len(source.context)
    assert fork_state.session_id == session_id


def test_undo_removes_the_export_file(sample: Path) -> None:
    outcome = edit_session(sample, Policy(keep_turns=0)).as_json()
    assert undo(fork_named=names_fork)["removed"] and not Path(outcome["fork"]).exists()


def test_undo_tells_how_to_remove_the_copy_opencode_imported(
    sample: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ctxtop never writes OpenCode's database: undo removes the export file and names the
    command that removes the copy a user imported (the real CLI has it: opencode session
    delete <id>)."""
    session_id = edit_session(sample, Policy(keep_turns=0)).session_id
    assert main(["undo"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[1] == (
        f"if you imported it, `opencode session delete {session_id}` removes OpenCode's copy"
    )
    edit_session(sample, Policy(keep_turns=0))
    assert main(["undo", "--json"]) == 0
    assert "opencode session delete" in json.loads(capsys.readouterr().out)["note"]


def test_an_export_file_forks_too(sample: Path, tmp_path: Path) -> None:
    """An export file (as ``opencode export`` prints one; here the session's rows exported
    unchanged) is a session ctxtop edits as it edits the session in the database."""
    exported = tmp_path / "exported.json"
    writer = OpenCodeWriter(sample, read_session_bytes(sample))
    exported.write_bytes(writer.render({}, {}, new_session_id()))
    from_file = edit_session(exported, Policy(keep_turns=0)).as_json()
    from_database = edit_session(sample, Policy(keep_turns=0)).as_json()
    assert from_file["changed"] == from_database["changed"]
    assert from_file["tokens_after"] == from_database["tokens_after"]
    assert export_of(from_file)["info"]["id"] == from_file["session_id"]


def test_a_compacted_fork_starts_from_the_summary(sample: Path) -> None:
    outcome = compact_session(sample, keep_rounds=1).as_json()
    messages = export_of(outcome)["messages"]
    first = messages[0]
    assert first["info"]["role"] == "user" and "parentID" not in first["info"]
    assert first["parts"][0]["text"] == outcome["summary"] or first["parts"][0]["text"].startswith(
        OPENING
    )
    ids = {entry["info"]["id"] for entry in messages}
    assert all(entry["info"].get("parentID", first["info"]["id"]) in ids for entry in messages)
    assert len(messages) < len(read_session(sample).context)


def test_a_tool_part_without_a_name_is_unknown_in_the_compaction_as_on_the_dashboard(
    sample: Path, tmp_path: Path
) -> None:
    """The cut table names a call whose part has no ``tool`` as the dashboard does, not
    "None"."""
    document = json.loads(OpenCodeWriter(sample, read_session_bytes(sample)).render({}, {}, "x"))
    document["info"]["id"] = new_session_id()
    parts = [p for m in document["messages"] for p in m["parts"] if p["type"] == "tool"]
    del parts[-1]["tool"]  # (in the context after the compaction)
    exported = tmp_path / "exported.json"
    exported.write_text(json.dumps(document), encoding="utf-8")
    state = read_session(exported)
    assert state.tools[parts[-1]["callID"]].name == "unknown"
    loaded = load(exported, COMPACTING)
    table = preview_compact(loaded, keep_rounds=0).details.round_table
    names = {name for row in table for name in row.calls}
    assert "unknown" in names and "None" not in names


def test_an_export_with_parts_that_are_no_list_is_one_line_naming_the_file(
    sample: Path, tmp_path: Path
) -> None:
    """The reader skips such a document's line (naming it); a fork of it is refused with the
    file's name, not a traceback."""
    document = json.loads(OpenCodeWriter(sample, read_session_bytes(sample)).render({}, {}, "x"))
    document["info"]["id"] = new_session_id()
    document["messages"][2]["parts"] = 5
    exported = tmp_path / "exported.json"
    exported.write_text(json.dumps(document), encoding="utf-8")
    assert [s.reason for s in read_session(exported).skipped] == [
        "unexpected record shape (TypeError)"
    ]
    with pytest.raises(InputError, match=f"^{exported}: .*parts"):
        edit_session(exported, Policy(keep_turns=0))


def test_an_export_as_opencode_prints_it_forks_whole(sample: Path, tmp_path: Path) -> None:
    """``opencode export`` prints the document indented, over many lines: the fork holds its
    messages (it was a fork of none)."""
    document = json.loads(OpenCodeWriter(sample, read_session_bytes(sample)).render({}, {}, "x"))
    document["info"]["id"] = new_session_id()
    printed = tmp_path / "printed.json"
    printed.write_text(json.dumps(document, indent=2), encoding="utf-8")
    from_file = edit_session(printed, Policy(keep_turns=0)).as_json()
    from_database = edit_session(sample, Policy(keep_turns=0)).as_json()
    assert from_file["changed"] == from_database["changed"]
    assert from_file["tokens_after"] == from_database["tokens_after"]
    assert len(export_of(from_file)["messages"]) == len(document["messages"])

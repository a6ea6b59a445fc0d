"""Pi sessions: the figures ctxtop shows for a real Pi 0.73.1 session equal what the scripted
model answered (its own record), a compaction and a branch rebuild the context, Pi's settings
move its auto-compaction point and its session files are found where Pi keeps them; ``ctxtop
compact`` and ``ctxtop restore`` write Pi's own entries (the real CLI resumes them:
tests/integration/test_resume_pi.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from agent_samples import answered, followed_and_fresh, rows, totals
from sessions_home import report_json

from ctxtop.engine.agents.pi.reader import PiAdapter
from ctxtop.engine.agents.session_reader import read_session
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks.compact import compact_session
from ctxtop.engine.forks.edit import edit_session
from ctxtop.engine.forks.restore import HEADER, restore_session
from ctxtop.engine.sessions.fork_mark import FORK_KEY

ROOT = Path(__file__).resolve().parents[2]
AGENT_DIR = ROOT / "sample_sessions" / "pi"
PROJECT = "--home-dev-pi-projects-calc-pi--"
SAMPLE = next((AGENT_DIR / "sessions" / PROJECT).glob("*.jsonl"))
CALLS = answered("pi_server_usage.jsonl")
MAIN = [call for call in CALLS if call.kind == "main"]


def test_the_figures_are_what_the_model_answered() -> None:
    report = report_json(SAMPLE)
    # Pi logs every main call and not its two summarisation calls (nowhere in the file).
    assert len(CALLS) - len(MAIN) == 2
    assert report["api_requests"] == len(MAIN) == 13
    assert report["totals"] == totals(MAIN)
    last = report["last_request"]
    assert (last["input_tokens_total"], last["cache_read_tokens"], last["output_tokens"]) == (
        MAIN[-1].prompt,
        MAIN[-1].cached,
        MAIN[-1].completion,
    )
    context = report["context_tokens"]
    assert (context["value"], context["source"]) == (
        MAIN[-1].prompt + MAIN[-1].completion,
        "reported",
    )
    assert report["model"] == "claude-sonnet-4-5" and report["agent"] == "pi"


def test_the_compaction_is_what_pi_counted_then_the_next_prompt() -> None:
    report = report_json(SAMPLE)
    logged = next(row for row in rows(SAMPLE) if row["type"] == "compaction")
    first_after = CALLS[[call.kind for call in CALLS].index("compact") + 2]  # after both calls
    [compaction] = report["compactions"]
    assert compaction["pre_tokens"] == logged["tokensBefore"]
    assert (compaction["post_tokens"], compaction["post_tokens_source"]) == (
        first_after.prompt,
        "request",
    )


def test_after_a_compaction_the_context_is_the_summary_and_the_kept_entries() -> None:
    state = read_session(SAMPLE)
    entries = rows(SAMPLE)
    compaction = next(row for row in entries if row["type"] == "compaction")
    first = state.context[0]
    assert first.kind == "compact_summary" and first.blocks[0].text == compaction["summary"]
    kept = [row["id"] for row in entries[1:] if row["type"] == "message"]
    kept = kept[kept.index(compaction["firstKeptEntryId"]) :]
    assert [message.id for message in state.context[1:]] == kept


def test_a_branch_is_the_context_of_its_own_path(tmp_path: Path) -> None:
    """``/tree`` back to the first answer, then a new prompt: the model sees that path only."""
    entries = rows(SAMPLE)
    first_answer = next(row for row in entries if row.get("message", {}).get("role") == "assistant")
    prompt = {
        "type": "message",
        "id": "b0b0b0b0",
        "parentId": first_answer["id"],
        "timestamp": "2026-11-29T02:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "another way"}]},
    }
    session = tmp_path / SAMPLE.name
    session.write_text(
        "".join(json.dumps(row) + "\n" for row in [*entries, prompt]), encoding="utf-8"
    )
    path_ids = [row["id"] for row in entries[1:] if row["type"] == "message"]
    path_ids = path_ids[: path_ids.index(first_answer["id"]) + 1]
    assert [message.id for message in read_session(session).context] == [*path_ids, "b0b0b0b0"]


def test_followed_live_it_equals_the_file_read_at_once(tmp_path: Path) -> None:
    session = tmp_path / SAMPLE.name
    shutil.copyfile(SAMPLE, session)
    live, fresh = followed_and_fresh(session)
    assert live == fresh and live["api_requests"] == len(MAIN)


def settings(agent_dir: Path, **values: Any) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps(values), encoding="utf-8")


def placed(agent_dir: Path) -> Path:
    target = agent_dir / "sessions" / PROJECT / SAMPLE.name
    target.parent.mkdir(parents=True)
    shutil.copyfile(SAMPLE, target)
    return target


def test_auto_compaction_is_at_the_window_less_pi_s_reserve(tmp_path: Path) -> None:
    session = placed(tmp_path / "agent")
    assert PiAdapter(session).autocompact_at(200_000) == 200_000 - 16_384  # Pi's default
    settings(tmp_path / "agent", compaction={"reserveTokens": 50_000})
    assert PiAdapter(session).autocompact_at(200_000) == 150_000
    settings(tmp_path / "agent", compaction={"enabled": False})
    assert PiAdapter(session).autocompact_at(200_000) is None


@pytest.mark.parametrize("where", ["default", "PI_CODING_AGENT_DIR", "sessionDir", "session env"])
def test_sessions_are_found_where_pi_keeps_them(where: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env: dict[str, str] = {}
    if where == "default":
        target = placed(home / ".pi" / "agent")
    elif where == "PI_CODING_AGENT_DIR":
        env["PI_CODING_AGENT_DIR"] = str(tmp_path / "pi")
        target = placed(tmp_path / "pi")
        placed(home / ".pi" / "agent")  # not this one: the variable moves the agent directory
    else:
        flat = tmp_path / "flat"
        flat.mkdir()
        target = flat / SAMPLE.name
        shutil.copyfile(SAMPLE, target)
        if where == "sessionDir":
            settings(home / ".pi" / "agent", sessionDir=str(flat))
        else:
            env["PI_CODING_AGENT_SESSION_DIR"] = str(flat)
    assert list(PiAdapter.discover(env, home)) == [target]


def compacted(tmp_path: Path, keep_rounds: int) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows of ``ctxtop compact``'s fork of the sample, and the ids of its context."""
    session = tmp_path / SAMPLE.name
    shutil.copyfile(SAMPLE, session)
    fork = Path(compact_session(session, keep_rounds=keep_rounds).as_json()["fork"])
    return rows(fork), [message.id for message in read_session(fork).context]


def test_compacting_whole_turns_appends_pi_s_own_compaction_entry(tmp_path: Path) -> None:
    """The last turn's five rounds kept: a ``compaction`` entry after the last entry, keeping
    from the turn's request, as Pi's ``/compact`` writes one; Pi's context is its summary then
    the turn."""
    entries = rows(SAMPLE)
    fork, context = compacted(tmp_path, keep_rounds=5)
    *copied, compaction = fork
    assert copied[1:] == entries[1:]  # every entry kept as it was
    request = entries[[row["id"] for row in entries].index("a4d8b01e") + 1]["id"]
    assert compaction["type"] == "compaction" and compaction["parentId"] == entries[-1]["id"]
    assert compaction["firstKeptEntryId"] == request
    assert compaction["details"]["modifiedFiles"] == ["src/calc/ops.py"]  # the previous one's
    ids = [row["id"] for row in entries[1:]]
    assert context == [compaction["id"], *ids[ids.index(request) :]]


def test_compacting_inside_a_turn_branches_to_keep_its_request(tmp_path: Path) -> None:
    """One round kept: the turn's request stays before it, so the compaction is on a branch
    from the request holding a copy of the last round, the old path left in the file."""
    entries = rows(SAMPLE)
    fork, context = compacted(tmp_path, keep_rounds=1)
    *copied, last_round, compaction = fork
    assert copied[1:] == entries[1:]
    request = entries[[row["id"] for row in entries].index("a4d8b01e") + 1]
    assert last_round["parentId"] == request["id"] == compaction["firstKeptEntryId"]
    assert last_round["message"] == entries[-1]["message"] and last_round["id"] != entries[-1]["id"]
    assert context == [compaction["id"], request["id"], last_round["id"]]


def test_compacting_everything_keeps_no_entry(tmp_path: Path) -> None:
    fork, context = compacted(tmp_path, keep_rounds=0)
    assert fork[-1]["firstKeptEntryId"] == fork[-1]["id"] and context == [fork[-1]["id"]]


def test_restore_re_adds_an_item_right_after_the_compaction(tmp_path: Path) -> None:
    """Pi sends the summary, the entries it kept, then the entries after it: the re-added
    message is the compaction's child, before the next prompt."""
    session = tmp_path / SAMPLE.name
    shutil.copyfile(SAMPLE, session)
    fork = Path(restore_session(session, 1, ["U2"]).as_json()["fork"])
    context = read_session(fork).context
    ids = [message.id for message in context]
    readded = next(m for m in context if m.blocks[0].text.startswith(HEADER))
    at = ids.index(readded.id)
    assert ids[:at] == ["a4d8b01e", "38ecf513", "2255581a", "b05ab1b3"]  # summary, kept entries
    assert ids[at + 1] == "e7eb5690"  # the prompt after the compaction
    assert "Check the first few hundred lines" in readded.blocks[0].text


def test_an_entry_whose_parent_is_no_id_does_not_stop_an_edit_preview(tmp_path: Path) -> None:
    """A list where an entry's ``parentId`` goes (in the history a compaction replaced): the
    reader leaves that line out, and the fork writer's walk to the root ends there; the preview
    sees the tool uses of the intact session (it failed with a TypeError)."""
    entries = rows(SAMPLE)
    entries[5]["parentId"] = [entries[4]["id"]]
    session = tmp_path / SAMPLE.name
    session.write_text("".join(json.dumps(row) + "\n" for row in entries), encoding="utf-8")
    intact = tmp_path / "intact" / SAMPLE.name
    intact.parent.mkdir()
    shutil.copyfile(SAMPLE, intact)
    preview = edit_session(session, Policy(keep_turns=1), dry_run=True).as_json()
    expected = edit_session(intact, Policy(keep_turns=1), dry_run=True).as_json()
    assert (preview["tool_uses"], preview["turns"]) == (expected["tool_uses"], 1)
    assert [skip.line for skip in read_session(session).skipped] == [6]


@pytest.mark.parametrize(
    "odd",
    [
        pytest.param({"type": "label", "id": ["x"], "parentId": None}, id="a list for an id"),
        pytest.param("plain", id="a string among an answer's parts"),
    ],
)
def test_odd_values_in_the_last_entries_do_not_stop_an_edit_preview(
    odd: Any, tmp_path: Path
) -> None:
    """A last line whose id is a list, or an answer whose content holds a bare string: the
    preview sees the intact session's tool uses (they failed with a TypeError and an
    AttributeError)."""
    entries = rows(SAMPLE)
    if isinstance(odd, dict):
        entries.append(odd)
    else:
        entries[-1]["message"]["content"].insert(0, odd)
    session = tmp_path / SAMPLE.name
    session.write_text("".join(json.dumps(row) + "\n" for row in entries), encoding="utf-8")
    preview = edit_session(session, Policy(keep_turns=1), dry_run=True).as_json()
    assert (preview["tool_uses"], preview["turns"]) == (5, 1)


def test_an_entry_of_a_type_that_is_no_name_stays_on_the_path(tmp_path: Path) -> None:
    """A list where an entry's ``type`` goes, after the compaction: Pi passes over such an
    entry on its way to the root, and so does the reader (it left the line out, so the entries
    after it lost the context before it)."""
    entries = rows(SAMPLE)
    at = len(entries) - 2
    odd = {"type": ["x"], "id": "0dd0dd00", "parentId": entries[at - 1]["id"]}
    entries[at]["parentId"] = odd["id"]
    entries.insert(at, odd)
    session = tmp_path / SAMPLE.name
    session.write_text("".join(json.dumps(row) + "\n" for row in entries), encoding="utf-8")
    state = read_session(session)
    assert [message.id for message in state.context] == [
        message.id for message in read_session(SAMPLE).context
    ]
    assert state.skipped == [] and sum(state.unknown_types.values()) == 1


def test_an_answer_whose_stop_reason_is_no_name_is_counted(tmp_path: Path) -> None:
    entries = rows(SAMPLE)
    entries[-1]["message"]["stopReason"] = ["stop"]
    session = tmp_path / SAMPLE.name
    session.write_text("".join(json.dumps(row) + "\n" for row in entries), encoding="utf-8")
    state = read_session(session)
    assert state.skipped == [] and len(state.responses) == len(MAIN)
    assert state.context[-1].id == entries[-1]["id"]


def test_an_edit_replaces_results_only_in_the_messages_pi_sends(tmp_path: Path) -> None:
    """An extension's ``custom`` entry that keeps a copy of a tool result (Pi never sends it)
    is copied into the fork as it was; the result itself is cleared (the copy was changed too)."""
    intact = tmp_path / "intact" / SAMPLE.name
    intact.parent.mkdir()
    shutil.copyfile(SAMPLE, intact)
    fork = rows(Path(edit_session(intact, Policy(keep_turns=0)).as_json()["fork"]))
    entries = rows(SAMPLE)
    cleared = [
        row["message"]
        for row, forked in zip(entries, fork, strict=True)
        if row.get("message", {}).get("role") == "toolResult" and row != forked
    ]
    assert cleared
    kept = {
        "type": "custom",
        "customType": "notes",
        "id": "c0c0c0c0",
        "parentId": entries[-1]["id"],
        "timestamp": entries[-1]["timestamp"],
        "message": cleared[0],
    }
    session = tmp_path / SAMPLE.name
    session.write_text(
        "".join(json.dumps(row) + "\n" for row in [*entries, kept]), encoding="utf-8"
    )
    fork = rows(Path(edit_session(session, Policy(keep_turns=0)).as_json()["fork"]))
    assert {name: value for name, value in fork[-1].items() if name != FORK_KEY} == kept
    assert [row for row in fork[:-1] if row.get("message") == cleared[0]] == []

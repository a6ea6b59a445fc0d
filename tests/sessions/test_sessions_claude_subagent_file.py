"""A Claude Code sub-agent's transcript opened on its own is a session of its own: its requests,
totals, model and context at the top level, and the session and tool call that started it."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest
from sessions_expect import claude_responses, prompt_total, records, report

from ctxtop.engine.cli.main import main

DATA = Path(__file__).parent / "data"
REAL = (
    DATA / "real" / "claude-code" / "generated-cli-2.1.330" / "projects" / "-home-dev-demo-project"
)
HARNESS = DATA / "generated" / "claude-code"
SUBAGENT_SESSION = HARNESS / "calc-subagent" / "839a2c62-3a15-4a30-b02f-45ac97c09c44.jsonl"
LEGACY = HARNESS / "calc-legacy-2-0-77"
# (the sub-agent's file, its parent session's file)
CASES = {
    # 2.1.330: its transcript replays the parent's responses, which are not its own requests.
    "2.1.330-replaying": (
        REAL
        / "b7f51370-d8c8-469b-95e6-e7046fb8d0f3"
        / "subagents"
        / "agent-a0ed8cda787e7130f.jsonl",
        REAL / "b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl",
    ),
    "2.1.197-general": (
        SUBAGENT_SESSION.with_suffix("") / "subagents" / "agent-a4527db0bef9bacea.jsonl",
        SUBAGENT_SESSION,
    ),
    "2.1.197-explore": (
        SUBAGENT_SESSION.with_suffix("") / "subagents" / "agent-ad18afc20df045486.jsonl",
        SUBAGENT_SESSION,
    ),
    # 2.0.77: agent-<id>.jsonl beside the session, no meta file: the Task call by its prompt.
    "2.0.77-flat": (
        LEGACY / "agent-a721686.jsonl",
        LEGACY / "b8dbf70f-8fe2-45d4-ad75-7bda748cad44.jsonl",
    ),
}


def text_report(path: Path) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", str(path)]) == 0
    return out.getvalue()


@pytest.mark.parametrize("case", list(CASES))
def test_opened_alone_it_reports_its_own_figures_and_names_its_parent(case: str) -> None:
    sub_file, parent_file = CASES[case]
    alone = report(sub_file)
    via_parent = report(parent_file)
    entry = next(s for s in via_parent["subagents"] if Path(s["file"]) == sub_file)
    # Its own requests: the responses of its file, less those its parent made.
    own = claude_responses(records(sub_file), exclude=set(claude_responses(records(parent_file))))
    assert own and alone["api_requests"] == len(own) == entry["api_requests"]
    assert alone["last_request"]["input_tokens_total"] == prompt_total(list(own.values())[-1])
    assert alone["model"] == entry["model"] is not None
    assert alone["totals"] == entry["totals"]
    assert alone["context_tokens"]["value"] == entry["context_tokens"]["value"] > 0
    assert alone["subagents"] == []  # its siblings are its parent's, not its own
    assert entry["parent_tool_call_id"] is not None
    assert alone["subagent_of"] == {
        "id": entry["id"],
        "description": entry["description"],
        "parent_session_id": parent_file.stem,
        "parent_file": str(parent_file),
        "parent_tool_call_id": entry["parent_tool_call_id"],
    }
    text = text_report(sub_file)
    assert f"requests   {len(own)}\n" in text
    assert f"session {parent_file.stem} ({parent_file})" in text
    assert f"tool call {entry['parent_tool_call_id']}" in text


def test_without_its_parent_beside_it_it_is_still_a_session_and_says_the_parent_is_missing(
    tmp_path: Path,
) -> None:
    sub_file, _ = CASES["2.0.77-flat"]
    alone = tmp_path / sub_file.name
    shutil.copyfile(sub_file, alone)
    got = report(alone)
    assert got["api_requests"] == len(claude_responses(records(sub_file))) > 0
    assert got["model"] is not None
    assert got["subagent_of"]["id"] == "a721686"
    assert got["subagent_of"]["parent_file"] is None
    assert "parent     not found beside this file" in text_report(alone)


def test_a_main_session_is_not_a_sub_agent() -> None:
    got = report(SUBAGENT_SESSION)
    assert got["subagent_of"] is None
    assert len(got["subagents"]) == 2


def _compaction_agent(session: Path, agent_id: str) -> Path:
    """A compaction sub-agent's transcript, built by hand (no CLI at hand writes one: Claude Code
    2.1.197 and 2.1.330 compacted in the main file only) from the layout public tools document:
    ``<session>/subagents/agent-acompact-<id>.jsonl``, sidechain lines whose first prompt is the
    conversation being summarised, which starts with a ``<system-reminder>``."""
    rows = records(session)
    template = next(r for r in rows if r.get("type") == "assistant")
    base = {
        "isSidechain": True,
        "agentId": agent_id,
        "sessionId": session.stem,
        "version": "2.1.197",
        "cwd": "/home/dev/projects/calc",
    }
    prompt = {
        **base,
        "type": "user",
        "uuid": "c-1",
        "parentUuid": None,
        "timestamp": "2026-11-22T16:10:00.000Z",
        "message": {
            "role": "user",
            "content": "<system-reminder>\nAs you answer the user's questions, you can use the"
            " following context\n</system-reminder>\nfix the bug in calc.py\n\nYour task is to"
            " create a detailed summary of the conversation so far.",
        },
    }
    usage = {"input_tokens": 20, "cache_read_input_tokens": 9000, "output_tokens": 400}
    summary = {
        **base,
        "type": "assistant",
        "uuid": "c-2",
        "parentUuid": "c-1",
        "timestamp": "2026-11-22T16:10:05.000Z",
        "message": {
            **template["message"],
            "id": "msg_compaction_summary",
            "content": [{"type": "text", "text": "<summary>The user asked …</summary>"}],
            "usage": usage,
        },
    }
    target = session.parent / session.stem / "subagents" / f"agent-{agent_id}.jsonl"
    target.parent.mkdir(parents=True)
    target.write_text("".join(json.dumps(row) + "\n" for row in (prompt, summary)))
    return target


def test_a_compaction_sub_agent_is_described_as_what_it_is(tmp_path: Path) -> None:
    session = tmp_path / SUBAGENT_SESSION.name
    shutil.copyfile(SUBAGENT_SESSION, session)
    agent = _compaction_agent(session, "acompact-5f2e9c1d0a7b3e64")
    described = "compaction (summarises the conversation)"
    entries = {s["id"]: s for s in report(session)["subagents"]}
    assert entries["acompact-5f2e9c1d0a7b3e64"]["description"] == described
    alone = report(agent)
    assert alone["subagent_of"]["description"] == described
    assert alone["api_requests"] == 1
    assert alone["subagent_of"]["parent_file"] == str(session)
    assert f"sub-agent  acompact-5f2e9c1d0a7b3e64 {described}" in text_report(agent)


def test_a_sub_agent_line_of_the_wrong_shape_is_skipped_by_name(tmp_path: Path) -> None:
    sub_file, _ = CASES["2.0.77-flat"]
    rows = records(sub_file)
    rows[0] = {**rows[0], "message": "not an object"}
    target = tmp_path / sub_file.name
    target.write_text("".join(json.dumps(row) + "\n" for row in rows))
    got = report(target)
    assert got["skipped_lines"] == [
        {"file": str(target), "line": 1, "reason": "user record without a message"}
    ]
    assert got["subagent_of"]["id"] == "a721686"
    assert got["api_requests"] == len(claude_responses(rows[1:]))

"""Compacted sessions as the agent will resume them: Claude Code, Codex and the generic format;
what is kept, what becomes a placeholder, undo, the cut point, summaries that compound."""

from __future__ import annotations

import hashlib
import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from chat_files import fork_messages, write_chat

from ctxtop.engine.agents.codex.writer import CodexWriter
from ctxtop.engine.agents.session_reader import read_session
from ctxtop.engine.cli.main import main
from ctxtop.engine.compaction.structured import TITLES
from ctxtop.engine.editing import action_log
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.forks.compact import compact_session

ROOT = Path(__file__).resolve().parents[2]
CALC_MAIN = (
    ROOT / "tests/sessions/data/generated/claude-code/calc-main/"
    "e6da809c-ea6a-48e8-8ca6-02bf23adae92.jsonl"
)
CODEX = sorted((ROOT / "sample_sessions/codex").rglob("rollout-*.jsonl"))[0]  # 0.169's
LAST_REQUEST = "What have we changed so far? Keep it short."
PNG = (  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def copy(source: Path, tmp_path: Path) -> Path:
    target = tmp_path / source.name
    shutil.copyfile(source, target)
    return target


def context_text(path: Path) -> str:
    state = read_session(path)
    return json.dumps(
        [[m.kind, m.role, [b.content() for b in m.blocks]] for m in state.context],
        ensure_ascii=False,
    )


def test_claude_code_fork_starts_at_the_summary_and_keeps_the_last_round(tmp_path: Path) -> None:
    """The last turn (a request, a Bash round, the answer round) is cut inside: the answer round
    and the request stay verbatim, the Bash round goes into the summary."""
    source = copy(CALC_MAIN, tmp_path)
    before = digest(source)
    outcome = compact_session(source, keep_rounds=1).as_json()
    fork = Path(outcome["fork"])
    assert fork.parent == source.parent and fork.name == f"{outcome['session_id']}.jsonl"
    assert digest(source) == before
    state = read_session(fork)
    kinds = [m.kind for m in state.context]
    assert kinds[:2] == ["compact_boundary", "compact_summary"]
    assert state.session_id == outcome["session_id"]
    summary_text = state.context[1].blocks[0].content()
    assert summary_text.endswith(outcome["summary"])
    assert "current request follows it verbatim, then the 1 most recent round" in summary_text
    sent = context_text(fork)
    assert LAST_REQUEST in sent  # the request of the turn the cut falls in, verbatim
    assert outcome["kept_request"] and outcome["round_table"][-1]["kept"]
    # The turn's earlier round (a Bash call and its result) is summarised, not kept.
    assert "toolu_01b555a6e12c2c4d4eb2bf07" not in fork.read_text()
    assert "git log --oneline" in outcome["summary"]
    assert "Continue from where you left off." not in sent  # dropped with the lead-in
    assert '"# Changelog' not in sent  # the re-attached file contents are gone
    assert outcome["kept_rounds"] == 1 and outcome["tokens_after"] < outcome["tokens_before"]
    records = [json.loads(line) for line in fork.read_text().splitlines()]
    assert {r["sessionId"] for r in records} == {outcome["session_id"]}
    chain = [r for r in records if r.get("uuid")]
    assert all(b["parentUuid"] == a["uuid"] for a, b in itertools.pairwise(chain))
    stamps = [r["timestamp"] for r in chain]
    assert stamps == sorted(stamps)
    logged = action_log.read_actions()[-1]
    assert logged["kind"] == "compact" and logged["fork"] == str(fork)


def test_undo_removes_the_compacted_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = copy(CALC_MAIN, tmp_path)
    assert main(["compact", str(source), "--json"]) == 0
    outcome = json.loads(capsys.readouterr().out)
    for key in ("fork", "session_id", "resume_command", "tokens_before", "tokens_after"):
        assert outcome[key]
    assert outcome["summarizer"] == "structured" and outcome["kept_rounds"] == 3  # the default
    assert {s["strategy"] for s in outcome["policies"]["strategies"]} >= {"copilot", "codex"}
    assert outcome["resume_command"].endswith(f"claude --resume {outcome['session_id']}")
    assert main(["undo", "--list"]) == 0
    assert " compact " in capsys.readouterr().out
    assert main(["undo"]) == 0
    assert "removed (compact " in capsys.readouterr().out
    assert not Path(outcome["fork"]).exists() and source.exists()


def test_text_output_shows_the_summary_and_the_tokens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = copy(CALC_MAIN, tmp_path)
    assert main(["compact", str(source), "--dry-run", "--keep-rounds", "0"]) == 0
    out = capsys.readouterr().out
    assert "1. Conversation overview" in out and LAST_REQUEST in out
    # The whole context as the report gives it, then the messages' part, calibrated (its
    # requests teach the session's tokenizer factor).
    assert main(["report", str(source), "--json"]) == 0
    context = json.loads(capsys.readouterr().out)["context_tokens"]
    assert f"context: {context['value']:,} ({context['source']}) -> " in out
    assert " in the log's messages (calibrated)" in out and "dry run: nothing written" in out
    assert " tokens (estimate; budget " in out  # the summary's size is a tokenizer count
    assert sorted(p.name for p in tmp_path.iterdir()) == [source.name]


def chat(rounds: int, last: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}]
    for n in range(1, rounds + 1):
        messages.append({"role": "user", "content": f"request number {n}"})
        messages.append({"role": "assistant", "content": f"answer number {n} " + "x " * 300})
    messages.extend(last or [])
    return messages


def test_generic_fork_is_system_summary_kept(tmp_path: Path) -> None:
    path = write_chat(tmp_path, chat(4))
    outcome = compact_session(path, keep_rounds=2).as_json()
    messages = fork_messages(outcome)
    assert messages[0] == {"role": "system", "content": "You are terse."}
    assert messages[1]["role"] == "user" and messages[1]["content"].endswith(outcome["summary"])
    assert [m["content"] for m in messages[2:] if m["role"] == "user"] == [
        "request number 3",
        "request number 4",
    ]
    assert '"request number 1"' in outcome["summary"]
    assert "request number 3" not in outcome["summary"]  # written without the kept rounds


def test_before_sets_the_cut_point(tmp_path: Path) -> None:
    path = write_chat(tmp_path, chat(5))
    outcome = compact_session(path, before=4, dry_run=True).as_json()
    assert (outcome["summarised_rounds"], outcome["kept_rounds"]) == (3, 2)
    with pytest.raises(CtxtopError, match="--before must be a round from 2 to 6"):
        compact_session(path, before=1, dry_run=True).as_json()
    with pytest.raises(CtxtopError, match="nothing to compact"):
        compact_session(path, keep_rounds=5, dry_run=True).as_json()


def test_attachments_and_images_in_kept_messages_become_placeholders(tmp_path: Path) -> None:
    last = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look at these"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                {"type": "file", "file": {"filename": "notes/plan.md", "file_data": "QUJD"}},
            ],
        },
        {"role": "assistant", "content": "seen"},
    ]
    outcome = compact_session(write_chat(tmp_path, chat(2, last)), keep_rounds=1).as_json()
    kept = json.dumps(fork_messages(outcome)[2:])
    assert PNG not in kept and "QUJD" not in kept
    assert "Read notes/plan.md again" in kept and "an image" in kept
    assert "look at these" in kept


def test_claude_code_kept_file_attachment_and_image_become_placeholders(tmp_path: Path) -> None:
    source = copy(CALC_MAIN, tmp_path)
    records = [json.loads(line) for line in source.read_text().splitlines()]
    leaf = next(r for r in reversed(records) if r.get("type") == "assistant")
    envelope = {k: leaf[k] for k in ("sessionId", "cwd", "version", "isSidechain")}
    new = [
        {**envelope, "type": "user", "uuid": "u-1", "parentUuid": leaf["uuid"],
         "timestamp": "2026-11-22T18:00:00.000Z",
         "message": {"role": "user", "content": [
             {"type": "text", "text": "what is in this screenshot?"},
             {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                          "data": PNG}}]}},
        {**envelope, "type": "attachment", "uuid": "u-2", "parentUuid": "u-1",
         "timestamp": "2026-11-22T18:00:00.100Z",
         "attachment": {"type": "file", "filename": "/home/dev-a/projects/calc-main/big.py",
                        "content": {"type": "text", "file": {"content": "SECRET_CONTENT"}}}},
        {**envelope, "type": "assistant", "uuid": "u-3", "parentUuid": "u-2",
         "timestamp": "2026-11-22T18:00:01.000Z",
         "message": {"id": "msg_new", "role": "assistant", "model": "claude-opus-4-8",
                     "content": [{"type": "text", "text": "A terminal."}],
                     "usage": {"input_tokens": 150000, "output_tokens": 5}}},
    ]  # fmt: skip
    with open(source, "a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in new)
    outcome = compact_session(source, keep_rounds=1).as_json()
    sent = context_text(Path(outcome["fork"]))
    assert "what is in this screenshot?" in sent and "A terminal." in sent
    assert PNG not in sent and "SECRET_CONTENT" not in sent
    assert "Read /home/dev-a/projects/calc-main/big.py again" in sent
    assert "an image (image/png) was removed" in sent
    # The kept response's usage no longer claims the old 150,000-token prompt (the agent reads
    # it on resume); it is ctxtop's estimate, marked so: no reader counts it as a request.
    records = [json.loads(line) for line in Path(outcome["fork"]).read_text().splitlines()]
    kept = next(r for r in records if r.get("uuid") == "u-3")
    assert kept["message"]["usage"]["input_tokens"] < outcome["context_before"]
    assert kept["ctxtopUsage"] == "estimated"
    state = read_session(Path(outcome["fork"]))
    assert state.api_requests == 0 and state.last_response is None


def test_a_round_that_overflowed_is_kept_not_summarised(tmp_path: Path) -> None:
    last = [
        {"role": "user", "content": "paste the whole log"},
        {"role": "assistant", "content": "Error: prompt is too long: 210000 tokens > 200000"},
    ]
    outcome = compact_session(write_chat(tmp_path, chat(3, last)), keep_rounds=0).as_json()
    assert outcome["overflowed_round"] == 4 and outcome["kept_rounds"] == 1
    messages = fork_messages(outcome)
    assert messages[-1] == {"role": "user", "content": "paste the whole log"}
    assert "prompt is too long" not in json.dumps(messages)
    assert "paste the whole log" not in outcome["summary"]


def test_summaries_compound_and_point_to_the_transcripts_once(tmp_path: Path) -> None:
    source = copy(CALC_MAIN, tmp_path)
    first = compact_session(source, keep_rounds=1).as_json()
    second = compact_session(first["fork"], keep_rounds=0).as_json()
    summary = second["summary"]
    assert second["previous_summary"] and second["summarised_rounds"] == 1
    assert LAST_REQUEST in summary  # the round the first compaction kept
    assert "Make the CLI print a friendly error" in summary  # from the first summary
    assert summary.count("Full transcript") == 1
    assert f"before this summary: {first['fork']}" in summary
    assert f"The part before the previous summary is in: {source}" in summary


def test_codex_summary_carries_codexs_own_summary_without_its_handoff_note(
    tmp_path: Path,
) -> None:
    """A rollout Codex compacted itself: ctxtop's summary takes Codex's summary as the earlier
    work, without the note Codex puts before it (as it drops Claude Code's)."""
    source = copy(CODEX, tmp_path)
    [codexs] = [
        json.loads(line)["payload"]["message"]
        for line in source.read_text(encoding="utf-8").splitlines()
        if json.loads(line)["type"] == "compacted"
    ]
    note, own = codexs.split("\n", 1)
    assert note.startswith("Another language model")
    summary = compact_session(source, keep_rounds=0).as_json()["summary"]
    assert own.split("\n")[0][:200] in summary
    assert note[:60] not in summary


def test_codex_fork_appends_a_compacted_record(tmp_path: Path) -> None:
    source = copy(CODEX, tmp_path)
    before = digest(source)
    outcome = compact_session(source, keep_rounds=1).as_json()
    fork = Path(outcome["fork"])
    assert outcome["session_id"] in fork.name and digest(source) == before
    lines = [json.loads(line) for line in fork.read_text().splitlines()]
    assert lines[-1]["type"] == "compacted"
    assert lines[-1]["ordinal"] == lines[-2]["ordinal"] + 1  # Codex resumes only numbered lines
    history = CodexWriter(fork, fork.read_bytes()).context_items()
    assert history == lines[-1]["payload"]["replacement_history"]
    texts = [json.dumps(item) for item in history]
    summary_at = next(i for i, t in enumerate(texts) if "ctxtop compacted" in t)
    assert all(item.get("role") in ("developer", "user") for item in history[:summary_at])
    assert lines[0]["payload"]["id"] == outcome["session_id"]
    state = read_session(fork)
    assert state.session_id == outcome["session_id"]
    assert outcome["resume_command"] == f"codex resume {outcome['session_id']}"


def test_the_summary_fits_a_small_budget(tmp_path: Path) -> None:
    source = ROOT / "sample_sessions/claude-code/projects/-path-to-Demo"
    path = next(source.glob("5c0375b4*.jsonl"))
    roomy = compact_session(path, keep_rounds=0, dry_run=True).as_json()
    small = compact_session(path, keep_rounds=0, dry_run=True, budget=400).as_json()
    assert roomy["summary_tokens"] > 400 >= small["summary_tokens"]
    for number, title in enumerate(TITLES, 1):
        assert f"{number}. {title}" in small["summary"]
    assert small["summary"].rstrip().splitlines()[-1].startswith("Full transcript")
    # Lower sections shrink first: the overview keeps its request, recent operations lose lines.
    assert "orchestrator" in small["summary"].split("2. Technical foundation")[0]


def test_files_read_through_the_shell_are_in_the_codebase_status(tmp_path: Path) -> None:
    commands = ["sed -n '1,5p' src/app.py", "cat notes/todo.md | wc -l", "sed -i s/a/b/ x.py"]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "look around"}]
    for n, command in enumerate(commands):
        arguments = json.dumps({"command": command})
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{n}", "type": "function",
             "function": {"name": "run_shell", "arguments": arguments}}]})  # fmt: skip
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": "line\n" * 5})
    outcome = compact_session(write_chat(tmp_path, messages), keep_rounds=0, dry_run=True).as_json()
    status = outcome["summary"].split("3. Codebase status")[1].split("4. Problem")[0]
    assert "src/app.py: read (6 lines)" in status and "notes/todo.md: read" in status
    assert "x.py" not in status and "s/a/b/" not in status


def test_a_compaction_that_is_not_smaller_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Codex sample has little to summarise: its compacted session would be larger (6,330
    -> 6,510 tokens). It used to be written anyway with a warning and exit 0; now ``compact``
    refuses in one line, non-zero, and writes nothing; ``--dry-run`` says the same."""
    source = copy(CODEX, tmp_path)
    assert main(["compact", str(source)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    error = captured.err.strip()
    assert "\n" not in error and error.startswith(f"ctxtop: {source}: nothing to compact: ")
    assert "would not be smaller (" in error
    assert sorted(tmp_path.iterdir()) == [source] and action_log.read_actions() == []
    assert main(["compact", str(source), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "nothing to compact: the compacted session would not be smaller" in out
    assert "warning: the compacted session is not smaller" not in out

"""Claude Code layouts and chain rules on small hand-made variations of the real files."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from sessions_expect import (
    ENC,
    claude_active_chain,
    claude_responses,
    prompt_total,
    records,
    report,
    result_text,
)

from ctxtop.engine.cli.main import main

DATA = Path(__file__).parent / "data" / "real" / "claude-code"
PROJECT = DATA / "generated-cli-2.1.330" / "projects" / "-home-dev-demo-project"
SESSION = "b7f51370-d8c8-469b-95e6-e7046fb8d0f3"
PUBLIC = DATA / "public-d-kimuson-claude-code-viewer" / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_flat_agent_files_beside_the_session_are_its_subagents(tmp_path: Path) -> None:
    """2.0.x: ``agent-<id>.jsonl`` in the project dir, matched to the session by sessionId."""
    shutil.copy(PROJECT / f"{SESSION}.jsonl", tmp_path)
    sub = PROJECT / SESSION / "subagents" / "agent-a0ed8cda787e7130f.jsonl"
    shutil.copy(sub, tmp_path / "agent-a0ed8cda787e7130f.jsonl")
    stranger = [{**row, "sessionId": "another-session"} for row in records(sub)]
    _write(tmp_path / "agent-0000000000000000.jsonl", stranger)
    got = report(tmp_path / f"{SESSION}.jsonl")
    assert [s["id"] for s in got["subagents"]] == ["a0ed8cda787e7130f"]
    parent_ids = set(claude_responses(records(PROJECT / f"{SESSION}.jsonl")))
    responses = claude_responses(records(sub), exclude=parent_ids)
    assert got["subagents"][0]["api_requests"] == len(responses)


def test_a_rewind_makes_the_new_branch_the_active_context(tmp_path: Path) -> None:
    rows = records(PUBLIC)
    assistants = [r for r in rows if r.get("type") == "assistant"]
    fork_point = assistants[len(assistants) // 2]["uuid"]  # back to the middle, ask again
    template = assistants[0]
    user = next(r for r in rows if r.get("type") == "user")
    edited = {**user, "uuid": "edited-prompt", "message": {"role": "user", "content": "again"}}
    usage = {"input_tokens": 7, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 900}
    answer = {
        **template,
        "uuid": "edited-answer",
        "parentUuid": "edited-prompt",
        # An answer no longer than its output figure (a longer one would be counted as text).
        "message": {
            **template["message"],
            "id": "msg_new",
            "content": [{"type": "text", "text": "ok"}],
            "usage": {**usage, "output_tokens": 5},
        },
    }
    edited["parentUuid"] = fork_point
    target = tmp_path / "s.jsonl"
    _write(target, [*rows, edited, answer])
    got = report(target)
    chain = [r["uuid"] for r in claude_active_chain(records(target))]
    assert chain[-3:] == [fork_point, "edited-prompt", "edited-answer"]
    assert len(chain) < len([r for r in rows if "uuid" in r])  # the old tail is off the chain
    assert got["last_request"]["input_tokens_total"] == 1007
    assert got["context_tokens"] == {**got["context_tokens"], "value": 1012, "source": "reported"}
    # The abandoned branch was still paid for: every response counts.
    assert got["api_requests"] == len(claude_responses(rows)) + 1


def test_synthetic_responses_carry_no_usage(tmp_path: Path) -> None:
    rows = records(PUBLIC)
    last = rows[-1]
    synthetic = {
        **last,
        "type": "assistant",
        "uuid": "synthetic-line",
        "parentUuid": last["uuid"],
        "isApiErrorMessage": True,
        "message": {
            "id": "synthetic-id",
            "model": "<synthetic>",
            "role": "assistant",
            "content": [{"type": "text", "text": "API Error: overloaded"}],
            "usage": {"input_tokens": 0, "output_tokens": 0},
        },
    }
    target = tmp_path / "s.jsonl"
    _write(target, [*rows, synthetic])
    got, clean = report(target), report(PUBLIC)
    assert got["api_requests"] == clean["api_requests"]
    assert got["totals"] == clean["totals"]
    assert got["last_request"] == clean["last_request"]
    assert got["model"] == clean["model"]


def test_sessions_lists_what_claude_config_dir_holds_newest_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "projects" / "-home-dev-demo-project"
    shutil.copytree(PROJECT, project)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path / "nohome"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["sessions", "--agent", "claude-code", "--json"]) == 0
    rows = json.loads(out.getvalue())
    expected = sorted(PROJECT.glob("*.jsonl"))
    assert sorted(Path(row["file"]).name for row in rows) == [p.name for p in expected]
    last_seen = {
        p.name: max(r["timestamp"] for r in records(p) if "timestamp" in r) for p in expected
    }
    assert [Path(row["file"]).name for row in rows] == sorted(
        last_seen, key=last_seen.__getitem__, reverse=True
    )
    for row in rows:
        path = Path(row["file"])
        chain = claude_active_chain(records(path))
        last = [r for r in chain if r.get("type") == "assistant"][-1]
        usage = claude_responses(records(path))[last["message"]["id"]]
        assert row["agent"] == "claude-code"
        assert row["cwd"] == "/home/dev/demo-project"
        assert row["model"] == "claude-sonnet-4-5"
        assert row["context_tokens"] == prompt_total(usage) + usage["output_tokens"]
        assert row["fill_percent"] == round(100 * row["context_tokens"] / 200_000, 1)
    assert not os.path.exists(tmp_path / "nohome")


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, 200_000 - 20_000 - 13_000),
        ({"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"}, (200_000 - 20_000) // 2),
        ({"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "99"}, 200_000 - 20_000 - 13_000),
        ({"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"}, 100_000 - 20_000 - 13_000),
        ({"DISABLE_AUTO_COMPACT": "1"}, None),
    ],
)
def test_autocompact_point_follows_claude_codes_rule_and_settings(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: int | None
) -> None:
    for name in (
        "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE",
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW",
        "DISABLE_AUTO_COMPACT",
        "DISABLE_COMPACT",
    ):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert report(PUBLIC)["autocompact_at"] == expected


def test_the_format_comes_from_the_content_not_the_name(tmp_path: Path) -> None:
    claude_named_like_a_chat = tmp_path / "chat.json"
    shutil.copy(PUBLIC, claude_named_like_a_chat)
    assert report(claude_named_like_a_chat)["agent"] == "claude-code"
    samples = Path(__file__).resolve().parents[2] / "sample_sessions" / "openai-messages"
    chat_named_like_claude = tmp_path / "projects" / "-home-x" / f"{PUBLIC.stem}.jsonl"
    chat_named_like_claude.parent.mkdir(parents=True)
    shutil.copy(samples / "agent-loop.jsonl", chat_named_like_claude)
    assert report(chat_named_like_claude)["agent"] == "openai-messages"


def test_a_session_that_starts_with_metadata_lines_is_recognised(tmp_path: Path) -> None:
    rows = records(PUBLIC)
    queue = {"type": "queue-operation", "operation": "enqueue", "sessionId": PUBLIC.stem}
    target = tmp_path / "s.jsonl"
    _write(target, [queue] * 25 + rows)
    got = report(target)
    assert got["agent"] == "claude-code"
    assert got["api_requests"] == len(claude_responses(rows))


def test_messages_a_compaction_preserved_stay_in_the_context(tmp_path: Path) -> None:
    """2.1.x keeps the latest messages verbatim after the summary (``preservedMessages``)."""
    source = Path(__file__).parent / "data" / "generated" / "claude-code" / "calc-autocompact"
    lines = (source / "cab977aa-a7d9-408c-a2f0-9dcf156ac8c1.jsonl").read_bytes().splitlines(True)
    rows = [json.loads(line) for line in lines]
    last_boundary = max(i for i, r in enumerate(rows) if r.get("subtype") == "compact_boundary")
    kept = rows[last_boundary]["compactMetadata"]["preservedMessages"]
    summary = last_boundary + 1
    assert rows[summary]["uuid"] == kept["anchorUuid"]
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"".join(lines[: summary + 1]))  # right after the summary
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", str(target), "--json", "--breakdown"]) == 0
    got = json.loads(out.getvalue())
    by_uuid = {r.get("uuid"): r for r in rows}
    preserved_results = [
        block
        for uuid in kept["uuids"]
        if by_uuid[uuid]["type"] == "user"
        for block in by_uuid[uuid]["message"]["content"]
        if block.get("type") == "tool_result"
    ]
    assert preserved_results  # the big file read that made the agent compact again
    categories = {c["category"]: c["tokens"] for c in got["context_breakdown"]["categories"]}
    assert categories["tool_results"] == sum(
        ENC.count(result_text(block["content"])) for block in preserved_results
    )
    assert got["context_tokens"]["source"] == "compaction"


@pytest.mark.parametrize("how", ["beta", "requested-model"])
def test_a_session_on_the_1m_window_reports_it(tmp_path: Path, how: str) -> None:
    path = PROJECT / f"{SESSION}.jsonl"
    data = path.read_bytes()
    if how == "beta":
        data = data.replace(b'"betas":["claude-code-20250219"', b'"betas":["context-1m-2025-08-07"')
    else:
        data = data.replace(
            b'"requestedModel":"claude-sonnet-4-5"', b'"requestedModel":"sonnet[1m]"'
        )
    target = tmp_path / path.name
    target.write_bytes(data)
    plain, got = report(path), report(target)
    assert plain["context_window"] == 200_000
    assert got["context_window"] == 1_000_000
    assert got["context_window_source"] == "logged"
    assert got["autocompact_at"] == 1_000_000 - 20_000 - 13_000
    assert got["fill_percent"] == round(100 * got["context_tokens"]["value"] / 1_000_000, 1)

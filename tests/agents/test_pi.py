"""Pi sessions: the figures ctxtop shows for a real Pi 0.73.1 session equal what the scripted
model answered (its own record), a compaction and a branch rebuild the context, Pi's settings
move its auto-compaction point and its session files are found where Pi keeps them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from agent_samples import answered, followed_and_fresh, rows, totals
from sessions_home import report_json

from engine.agents.pi.reader import PiAdapter
from engine.agents.session_reader import read_session

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

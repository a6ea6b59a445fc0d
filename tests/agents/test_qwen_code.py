"""Qwen Code sessions: the figures ctxtop shows for a real Qwen Code 0.24.4 session equal what the
scripted model answered (its own record) and what Qwen Code itself summed up
(``usage_record.jsonl``); a compression replaces the context, a rewind rebuilds it, the
sub-agent is its own, Qwen's settings move its compression point and its session files are found
where it keeps them; ``ctxtop compact`` writes Qwen's own compression record and ``ctxtop
restore`` re-adds items into one (the real CLI resumes both:
tests/integration/test_resume_qwen_code.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from agent_samples import DATA, answered, followed_and_fresh, rows, totals
from sessions_home import report_json

from ctxtop.engine.agents.qwen_code.reader import QwenCodeAdapter
from ctxtop.engine.agents.session_reader import read_session
from ctxtop.engine.cli.main import main
from ctxtop.engine.compaction.handoff import OPENING
from ctxtop.engine.forks.compact import compact_session
from ctxtop.engine.forks.restore import HEADER, restore_session

ROOT = Path(__file__).resolve().parents[2]
QWEN_HOME = ROOT / "sample_sessions" / "qwen-code"
PROJECT = QWEN_HOME / "projects" / "-home-dev-qwen-projects-calc-qwen"
SESSION_ID = "443ea2f2-c530-473d-b86e-35a04a280ca7"
SAMPLE = PROJECT / "chats" / f"{SESSION_ID}.jsonl"
SUBAGENT = next((PROJECT / "subagents" / SESSION_ID).glob("agent-*.jsonl"))
CALLS = answered("qwen_server_usage.jsonl")


def subagent_prompts() -> list[int]:
    """The prompts of the sub-agent's calls, from its own transcript."""
    return [
        row["usageMetadata"]["promptTokenCount"]
        for row in rows(SUBAGENT)
        if isinstance(row.get("usageMetadata"), dict)
    ]


def split_calls() -> tuple[list[Any], list[Any]]:
    """The model's answers to the session itself (its calls and compressions) and to the
    sub-agent."""
    theirs = subagent_prompts()
    sub = [call for call in CALLS if call.prompt in theirs]
    return [call for call in CALLS if call not in sub], sub


def test_the_figures_are_what_the_model_answered() -> None:
    report = report_json(SAMPLE)
    session, sub = split_calls()
    assert len(sub) == 2 and sum(call.kind == "compact" for call in session) == 2
    # The compression calls, which only Qwen's telemetry records hold, count too.
    assert report["api_requests"] == len(session) == 15
    assert report["totals"] == totals(session)
    last = [call for call in session if call.kind == "main"][-1]
    figures = report["last_request"]
    assert (figures["input_tokens_total"], figures["cache_read_tokens"]) == (
        last.prompt,
        last.cached,
    )
    assert figures["output_tokens"] == last.completion
    [child] = report["subagents"]
    assert child["api_requests"] == len(sub)
    assert child["last_input_tokens_total"] == sub[-1].prompt
    assert child["totals"] == totals(sub)
    assert report["context_window"] == 131_072  # what Qwen logged with each answer


def test_requests_and_tokens_add_up_to_qwen_s_own_usage_record() -> None:
    """``usage_record.jsonl``: Qwen Code's running sums at the end of each run."""
    report = report_json(SAMPLE)
    model = json.loads(
        (DATA / "qwen_usage_record.jsonl").read_text(encoding="utf-8").splitlines()[-1]
    )["models"]["qwen3-coder-plus"]
    [child] = report["subagents"]
    assert report["api_requests"] + child["api_requests"] == model["requests"]
    both = [report["totals"], child["totals"]]
    prompts = sum(t["input"] + t["cache_read"] + t["cache_write"] for t in both)
    assert prompts == model["inputTokens"]
    assert sum(t["cache_read"] for t in both) == model["cachedTokens"]


def test_compressions_are_qwen_s_figures_then_the_next_prompt() -> None:
    report = report_json(SAMPLE)
    logged = [row for row in rows(SAMPLE) if row.get("subtype") == "chat_compression"]
    auto, manual = report["compactions"]
    info = [row["systemPayload"]["info"] for row in logged]
    assert (auto["trigger"], manual["trigger"]) == ("auto", "manual")
    assert [auto["pre_tokens"], manual["pre_tokens"]] == [i["originalTokenCount"] for i in info]
    session, _ = split_calls()
    after_first = session[[c.kind for c in session].index("compact") + 1]
    assert (auto["post_tokens"], auto["post_tokens_source"]) == (after_first.prompt, "request")
    # Nothing was sent after the manual one: the context is Qwen's estimate of the new history.
    assert (manual["post_tokens"], manual["post_tokens_source"]) == (
        info[1]["newTokenCount"],
        "estimate",
    )
    context = report["context_tokens"]
    assert (context["value"], context["source"]) == (info[1]["newTokenCount"], "compaction")


def test_a_compression_with_an_odd_trigger_is_still_a_compression(tmp_path: Path) -> None:
    records = rows(SAMPLE)
    first = next(r for r in records if r.get("subtype") == "chat_compression")
    first["systemPayload"]["info"]["triggerReason"] = ["token_limit"]
    session = tmp_path / SAMPLE.name
    session.write_text("".join(json.dumps(record) + "\n" for record in records))
    state = read_session(session)
    assert [c.trigger for c in state.compactions] == ["['token_limit']", "manual"]
    assert not state.skipped


def test_after_a_compression_the_context_is_the_compressed_history() -> None:
    state = read_session(SAMPLE)
    last = [row for row in rows(SAMPLE) if row.get("subtype") == "chat_compression"][-1]
    history = last["systemPayload"]["compressedHistory"]
    assert len(state.context) == len(history)
    assert state.context[0].kind == "compact_summary"
    assert state.context[0].blocks[0].text == history[0]["parts"][0]["text"]


def test_the_sub_agent_is_its_own_and_names_its_call() -> None:
    state = read_session(SAMPLE)
    meta = json.loads(SUBAGENT.with_suffix(".meta.json").read_text(encoding="utf-8"))
    [child] = state.subagents.values()
    assert child.parent_tool_call_id == meta["toolUseId"]
    assert child.description == meta["description"]
    assert meta["toolUseId"] in state.tools


def test_a_rewind_is_the_context_of_its_own_path(tmp_path: Path) -> None:
    """A prompt recorded after a rewind to the first answer: the model sees that path only."""
    records = rows(SAMPLE)[:26]  # the first turn, before any compression
    first_answer = next(row for row in records if row["type"] == "assistant")
    prompt = dict(
        records[0],
        uuid="00000000-rewound",
        parentUuid=first_answer["uuid"],
        message={"role": "user", "parts": [{"text": "another way"}]},
    )
    session = tmp_path / SAMPLE.name
    session.write_text("".join(json.dumps(r) + "\n" for r in [*records, prompt]), "utf-8")
    with_message = [row["uuid"] for row in records if isinstance(row.get("message"), dict)]
    expected = [*with_message[: with_message.index(first_answer["uuid"]) + 1], prompt["uuid"]]
    assert [message.id for message in read_session(session).context] == expected


def test_followed_live_it_equals_the_file_read_at_once(tmp_path: Path) -> None:
    project = tmp_path / "projects" / PROJECT.name
    shutil.copytree(PROJECT, project)
    live, fresh = followed_and_fresh(project / "chats" / SAMPLE.name)
    assert live == fresh
    assert live["subagents"] and live["api_requests"] == 15


def placed(qwen_dir: Path) -> Path:
    target = qwen_dir / "projects" / PROJECT.name / "chats" / SAMPLE.name
    target.parent.mkdir(parents=True)
    shutil.copyfile(SAMPLE, target)
    return target


def settings(directory: Path, threshold: float) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    document = {"context": {"autoCompactThreshold": threshold}}
    (directory / "settings.json").write_text(json.dumps(document), encoding="utf-8")


def test_compression_is_at_qwen_s_threshold(tmp_path: Path) -> None:
    session = placed(tmp_path / ".qwen")
    adapter = QwenCodeAdapter(session)
    # min(0.85 × window, window − 20,000 summary reserve − 13,000 buffer)
    assert adapter.autocompact_at(131_072) == 131_072 - 33_000
    assert adapter.autocompact_at(1_000_000) == 850_000
    settings(tmp_path / ".qwen", 0.5)
    assert QwenCodeAdapter(session).autocompact_at(131_072) == 65_536
    adapter = QwenCodeAdapter(session)
    project = tmp_path / "project"
    adapter.state.cwd = str(project)
    settings(project / ".qwen", 0.25)  # a project's settings over the user's
    assert adapter.autocompact_at(131_072) == 32_768


@pytest.mark.parametrize("where", ["default", "QWEN_HOME", "QWEN_RUNTIME_DIR"])
def test_sessions_are_found_where_qwen_keeps_them(where: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env: dict[str, str] = {}
    if where == "default":
        target = placed(home / ".qwen")
    else:
        env[where] = str(tmp_path / "elsewhere")
        target = placed(tmp_path / "elsewhere")
        placed(home / ".qwen")  # not this one: the variable moves them
    assert list(QwenCodeAdapter.discover(env, home)) == [target]


FIRST_TURN = 26  # the sample's lines up to the first answer's end


def compacted(tmp_path: Path, keep_rounds: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """``ctxtop compact`` of the sample's first turn: its outcome and the fork's last record."""
    session = tmp_path / SAMPLE.name
    lines = SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)[:FIRST_TURN]
    session.write_text("".join(lines), encoding="utf-8")
    outcome = compact_session(session, keep_rounds=keep_rounds).as_json()
    return outcome, rows(Path(outcome["fork"]))[-1]


def test_compacting_appends_qwen_s_own_compression_record(tmp_path: Path) -> None:
    """The last round kept: a ``chat_compression`` record after the last one, whose history is
    the summary, a model turn, the turn's request and the round (Qwen's history alternates);
    its ``newTokenCount`` (what Qwen counts from on resume) and ctxtop's "after" are the
    figure the preview promised."""
    entries = rows(SAMPLE)[:FIRST_TURN]
    outcome, record = compacted(tmp_path, keep_rounds=1)
    assert (record["type"], record["subtype"]) == ("system", "chat_compression")
    assert record["parentUuid"] == entries[-1]["uuid"]
    assert record["sessionId"] == outcome["session_id"]
    history = record["systemPayload"]["compressedHistory"]
    assert [content["role"] for content in history] == ["user", "model", "user", "model"]
    assert history[0]["parts"][0]["text"].startswith(OPENING)
    assert history[2:] == [entries[0]["message"], entries[-1]["message"]]
    assert record["systemPayload"]["info"]["newTokenCount"] == outcome["context_after"]
    [compaction] = read_session(Path(outcome["fork"])).compactions
    assert (compaction.trigger, compaction.post_tokens) == ("ctxtop", outcome["context_after"])


def test_compacting_everything_leaves_the_summary_alone(tmp_path: Path) -> None:
    _, record = compacted(tmp_path, keep_rounds=0)
    [summary] = record["systemPayload"]["compressedHistory"]
    assert summary["role"] == "user" and summary["parts"][0]["text"].startswith(OPENING)


def test_the_files_qwen_re_attaches_are_no_user_messages(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """After its compression Qwen re-attaches the files it had read ("Recently accessed
    file…"): the inspector takes them for files, never for a user instruction it forgot."""
    assert main(["compactions", str(SAMPLE), "--json"]) == 0
    second = json.loads(capsys.readouterr().out)["compactions"][1]
    labels = [message["label"] for message in second["user_messages"]]
    assert labels and not any(label.startswith("Recently accessed") for label in labels)


def test_restore_re_adds_an_item_right_after_the_summary(tmp_path: Path) -> None:
    """Into the compression's own history, after the summary and the model's answer to it:
    not after the record, where it would part the kept tool call from what follows."""
    session = tmp_path / SAMPLE.name
    shutil.copyfile(SAMPLE, session)
    fork = Path(restore_session(session, 1, ["U2"]).as_json()["fork"])
    context = read_session(fork).context
    assert context[0].kind == "compact_summary" and context[1].role == "assistant"
    assert context[2].blocks[0].text.startswith(HEADER)
    assert "Check the first few hundred lines" in context[2].blocks[0].text
    assert context[3].blocks[0].text.startswith("Recently accessed file")

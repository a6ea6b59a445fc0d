"""A fork ctxtop writes opens with ctxtop's own figure, marked estimated, and that figure is the
one its preview promised: never the usage ctxtop wrote into it (nor the parent's last request)
shown as reported. Until the agent makes a request on the fork; then the API's figure again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxtop.engine.cli.main import main
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks.compact import compact_session
from ctxtop.engine.forks.edit import edit_session

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
CLAUDE = SAMPLES / "claude-code/projects/-home-dev-demo-project"
CLAUDE_SESSION = CLAUDE / "b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl"
CODEX_SESSION = min((SAMPLES / "codex").rglob("rollout-*.jsonl"))  # 0.169's, by name
CHAT_LOG = SAMPLES / "openai-messages/agent-loop.jsonl"  # JSONL: the fork is a JSON list
CHAT_ENVELOPE = SAMPLES / "openai-messages/agent-loop.envelope.json"  # made by _copy


def _copy(tmp_path: Path, sample: Path) -> Path:
    """The sample; for the Codex one, its lines before its own compaction (where its tool
    outputs are still in the context, so that an edit clears some)."""
    source = tmp_path / sample.name
    if sample == CHAT_ENVELOPE:  # the same chat as one object holding its messages
        messages = [json.loads(line) for line in CHAT_LOG.read_text().splitlines()]
        source.write_text(json.dumps({"model": "gpt-5", "messages": messages}))
        return source
    lines = sample.read_bytes().splitlines(keepends=True)
    if sample == CODEX_SESSION:
        lines = lines[: next(i for i, line in enumerate(lines) if b'"type":"compacted"' in line)]
    source.write_bytes(b"".join(lines))
    return source


def _report(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["report", "--json", str(path)]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def _fork(kind: str, source: Path) -> dict[str, Any]:
    if kind == "compact":
        return compact_session(source, keep_rounds=1).as_json()
    return edit_session(source, Policy(keep_turns=0)).as_json()


CASES = [
    ("compact", CLAUDE_SESSION),
    ("edit", CLAUDE_SESSION),
    ("compact", CODEX_SESSION),
    ("edit", CODEX_SESSION),
    ("compact", CHAT_LOG),
    ("edit", CHAT_LOG),
    ("compact", CHAT_ENVELOPE),
    ("edit", CHAT_ENVELOPE),
]


@pytest.mark.parametrize(("kind", "sample"), CASES, ids=lambda case: getattr(case, "stem", case))
def test_a_fork_opens_with_the_figure_its_preview_promised_marked_estimated(
    kind: str, sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _copy(tmp_path, sample)
    parent = _report(source, capsys)
    outcome = _fork(kind, source)
    assert outcome["fork"] is not None
    fork = _report(Path(outcome["fork"]), capsys)
    context = fork["context_tokens"]
    assert context["source"] == "estimated" and context["reported"] is None
    assert context["value"] == outcome["context_after"]
    # The promise is the parent's gauge less what the fork took out, not the parent's figure.
    saved = outcome["tokens_before"] - outcome["tokens_after"]
    assert outcome["context_before"] == parent["context_tokens"]["value"]
    assert outcome["context_after"] == parent["context_tokens"]["value"] - saved
    text = ctxtop_text(Path(outcome["fork"]), capsys)
    assert f"context    {outcome['context_after']:,} tokens (estimated)" in text


def ctxtop_text(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["report", str(path)]) == 0
    return capsys.readouterr().out


def test_usage_ctxtop_wrote_into_a_compacted_claude_code_fork_is_no_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome = _fork("compact", _copy(tmp_path, CLAUDE_SESSION))
    lines = [json.loads(line) for line in Path(outcome["fork"]).read_text().splitlines()]
    written = [line for line in lines if "usage" in (line.get("message") or {})]
    assert written and all(line["ctxtopUsage"] == "estimated" for line in written)
    # What Claude Code counts its context from on resume is ctxtop's estimate too: the system
    # prompt and tools in every prompt (Claude Code's characters / 4 of the messages left
    # them out: 3,282 for a promised 22,694), the last response within the promise.
    for line in written:
        assert line["message"]["usage"]["input_tokens"] >= outcome["context_outside_log"] > 0
    last = written[-1]["message"]["usage"]
    assert last["input_tokens"] + last["output_tokens"] <= outcome["context_after"]
    fork = _report(Path(outcome["fork"]), capsys)
    assert fork["api_requests"] == 0 and fork["last_request"] is None
    assert fork["totals"] == {key: 0 for key in fork["totals"]}
    assert fork["model"] == written[-1]["message"]["model"]


def test_the_agents_next_request_on_the_fork_is_reported_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome = _fork("compact", _copy(tmp_path, CLAUDE_SESSION))
    path = Path(outcome["fork"])
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    last = next(line for line in reversed(lines) if line.get("type") == "assistant")
    last = {key: value for key, value in last.items() if not key.startswith("ctxtop")}
    usage = {"input_tokens": 7, "cache_read_input_tokens": 20_000, "output_tokens": 11}
    prompt = dict(last, uuid="u-new-user", parentUuid=last["uuid"], type="user")
    prompt["message"] = {"role": "user", "content": "and now?"}
    answer = dict(last, uuid="u-new-answer", parentUuid="u-new-user")
    answer["message"] = dict(last["message"], id="msg_after_resume", usage=usage)
    with path.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in (prompt, answer))
    fork = _report(path, capsys)
    context = fork["context_tokens"]
    assert (context["value"], context["source"], context["reported"]) == (
        20_018,
        "reported",
        20_018,
    )
    assert fork["api_requests"] == 1


@pytest.mark.parametrize("sample", [CODEX_SESSION, CLAUDE_SESSION], ids=["codex", "claude-code"])
def test_the_compaction_ctxtop_wrote_into_a_fork_reads_as_ctxtops_with_its_promise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sample: Path
) -> None:
    outcome = _fork("compact", _copy(tmp_path, sample))
    fork = Path(outcome["fork"])
    (written,) = _report(fork, capsys)["compactions"]
    # Not the agent's own (Codex's "auto", Claude Code's "manual", with no "after" until a
    # request follows): ctxtop's, fixed at the figure its preview promised and labelled as
    # ctxtop's estimate.
    assert (written["trigger"], written["post_tokens_source"]) == ("ctxtop", "ctxtop")
    assert written["after_tokens"] == written["post_tokens"] == outcome["context_after"]
    assert f"-> {outcome['context_after']:,} (ctxtop's estimate;" in ctxtop_text(fork, capsys)


def _chat(path: Path) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """(the object holding the messages or None, the messages) of a chat log."""
    text = path.read_text()
    if path.suffix == ".jsonl":
        return None, [json.loads(line) for line in text.splitlines()]
    document = json.loads(text)
    return (document, document["messages"]) if isinstance(document, dict) else (None, document)


@pytest.mark.parametrize("kind", ["compact", "edit"])
@pytest.mark.parametrize("sample", [CHAT_LOG, CHAT_ENVELOPE], ids=lambda path: path.stem)
def test_a_chat_log_fork_keeps_its_messages_keys_and_reports_no_usage_ctxtop_rewrote(
    kind: str, sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _copy(tmp_path, sample)
    outcome = _fork(kind, source)
    fork_path = Path(outcome["fork"])
    container, messages = _chat(fork_path)
    _, parent = _chat(source)
    # What a chat API reads stays the log's own: no message key the parent's messages lack.
    assert {key for m in messages for key in m} <= {key for m in parent for key in m}
    if container is not None:  # the mark outside the messages
        assert container["ctxtopFork"] == {
            "contextTokens": outcome["context_after"],
            "fork": outcome["session_id"],  # what undo asks for
        }
    # A request ctxtop's rewrite precedes is no request of the fork: only the responses before
    # the first changed message keep the usage the API reported, and count.
    first_change = next(i for i, (a, b) in enumerate(zip(messages, parent, strict=False)) if a != b)
    reported = [
        m["usage"] for m in messages[:first_change] if m["role"] == "assistant" and "usage" in m
    ]
    rewritten = [m["usage"] for m in messages[first_change:] if "usage" in m]
    assert rewritten and all(usage["ctxtopUsage"] == "estimated" for usage in rewritten)
    fork = _report(fork_path, capsys)
    assert fork["api_requests"] == len(reported)
    assert fork["totals"]["output"] == sum(usage["completion_tokens"] for usage in reported)

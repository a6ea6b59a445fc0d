"""``ctxtop edit`` on one long agentic turn (one prompt, a dozen tool calls, written by the real
Claude Code and Codex CLIs: tests/data/one_turn/PROVENANCE.md): the default policy keeps the last
3 tool uses and clears the older ones; a policy that clears nothing says what protected what and
the smallest change that would clear something, with what that change really saves."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ctxtop.engine.cli.main import main
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks.edit import edit_session

ONE_TURN = Path(__file__).resolve().parents[1] / "data/one_turn"
CLAUDE = next((ONE_TURN / "claude-code").glob("*.jsonl"))
CODEX = next((ONE_TURN / "codex").glob("rollout-*.jsonl"))


def calls_in_order(path: Path) -> list[str]:
    """The tool calls' ids as the agent logged them, oldest first."""
    ids: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        payload = record.get("payload") or {}
        if payload.get("type") == "function_call":  # Codex
            ids.append(payload["call_id"])
        content = (record.get("message") or {}).get("content")
        if record.get("type") == "assistant" and isinstance(content, list):  # Claude Code
            ids.extend(block["id"] for block in content if block.get("type") == "tool_use")
    return list(dict.fromkeys(ids))


def edit_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["edit", *argv, "--json"]) == 0
    outcome: dict[str, Any] = json.loads(capsys.readouterr().out)
    return outcome


def edit_text(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["edit", *argv]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("session", [CLAUDE, CODEX], ids=["claude-code", "codex"])
def test_the_default_clears_all_but_the_last_three_tool_uses_of_the_turn(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = calls_in_order(session)
    assert len(calls) >= 8  # one turn of many tool calls
    outcome = edit_json(capsys, str(session), "--dry-run")
    assert outcome["turns"] == 1
    assert outcome["policy"]["name"] == "tool-uses"
    assert outcome["policy"]["keep_tool_uses"] == 3
    assert [change["tool_call_id"] for change in outcome["changed"]] == calls[:-3]
    assert outcome["tokens_after"] < outcome["tokens_before"]
    assert outcome["nothing_to_clear"] is None and outcome["fork"] is None

    text = edit_text(capsys, str(session), "--dry-run")
    assert "policy: tool-uses: keep the last 3 tool uses" in text
    assert f"{len(calls) - 3} tool results change:" in text
    # The whole context (the gauge's), then the messages' part the edit changes.
    assert f"context: {outcome['context_before']:,} ({outcome['context_source']}) -> " in text
    assert f"{outcome['tokens_before']:,} -> {outcome['tokens_after']:,} in the log's" in text


def test_the_default_fork_keeps_the_last_three_results_verbatim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / CLAUDE.name
    shutil.copyfile(CLAUDE, source)
    outcome = edit_json(capsys, str(source))
    fork = Path(outcome["fork"])
    original = [json.loads(line) for line in source.read_text().splitlines()]
    forked = [json.loads(line) for line in fork.read_text().splitlines()]
    calls = calls_in_order(source)

    def result_of(records: list[dict[str, Any]], call: str) -> Any:
        for record in records:
            content = (record.get("message") or {}).get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_result" and block.get("tool_use_id") == call:
                    return block["content"]
        raise AssertionError(call)

    for call in calls[-3:]:
        assert result_of(forked, call) == result_of(original, call)
    for call in calls[:-3]:
        assert "[ctxtop: old tool result cleared" in str(result_of(forked, call))


def test_the_old_default_explains_what_protected_the_results_and_what_would_clear_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    calls = calls_in_order(CLAUDE)
    outcome = edit_json(capsys, str(CLAUDE), "--keep-cycles", "3", "--dry-run")
    assert outcome["policy"]["name"] == "turns" and outcome["policy"]["keep_tool_uses"] == 0
    assert outcome["changed"] == [] and outcome["tokens_after"] == outcome["tokens_before"]
    explained = outcome["nothing_to_clear"]
    assert explained["protected"] == {"in the last 3 turns (the session has 1)": len(calls)}
    suggestion = explained["suggestion"]
    assert suggestion["option"] == "--keep-turns 0"
    relaxed = edit_json(capsys, str(CLAUDE), "--keep-cycles", "0", "--dry-run")
    assert suggestion["results"] == len(relaxed["changed"]) == len(calls)
    assert suggestion["tokens"] == relaxed["cleared_tokens"] > 0
    assert suggestion["policy"] == relaxed["policy"]

    text = edit_text(capsys, str(CLAUDE), "--keep-cycles", "3", "--dry-run")
    assert (
        f"nothing to clear: all {len(calls)} tool uses are in the last 3 turns (the session has 1);"
        f" --keep-turns 0 clears {len(calls)} results ({relaxed['cleared_tokens']:,} tokens"
    ) in text
    assert explained["message"] in text


def test_keeping_more_tool_uses_than_there_are_suggests_the_first_count_that_clears(
    capsys: pytest.CaptureFixture[str],
) -> None:
    calls = calls_in_order(CLAUDE)
    many = str(len(calls) + 5)
    outcome = edit_json(capsys, str(CLAUDE), "--keep-tool-uses", many, "--dry-run")
    explained = outcome["nothing_to_clear"]
    assert explained["reason"] == f"all {len(calls)} tool uses are among the last {many} kept"
    fewer = str(len(calls) - 1)
    assert explained["suggestion"]["option"] == f"--keep-tool-uses {fewer}"
    relaxed = edit_json(capsys, str(CLAUDE), "--keep-tool-uses", fewer, "--dry-run")
    assert [c["tool_call_id"] for c in relaxed["changed"]] == calls[:1]
    assert explained["suggestion"]["tokens"] == relaxed["cleared_tokens"]
    assert explained["suggestion"]["results"] == 1


def test_a_saving_below_the_minimum_names_it_and_the_minimum_that_would_pass(
    capsys: pytest.CaptureFixture[str],
) -> None:
    default = edit_json(capsys, str(CLAUDE), "--dry-run")
    too_much = str(default["cleared_tokens"] + 1)
    outcome = edit_json(capsys, str(CLAUDE), "--min-tokens", too_much, "--dry-run")
    explained = outcome["nothing_to_clear"]
    assert outcome["below_minimum"] == default["cleared_tokens"]
    assert f"{default['cleared_tokens']:,} tokens" in explained["reason"]
    assert explained["protected"]["below the minimum saving"] == len(default["changed"])
    assert explained["suggestion"]["option"] == f"--min-tokens {default['cleared_tokens']}"
    assert explained["suggestion"]["tokens"] == default["cleared_tokens"]


def _chat(path: Path, messages: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"model": "gpt-4o", "messages": messages}), encoding="utf-8")
    return path


def _call(n: int, result: str | None) -> list[dict[str, Any]]:
    call = {"id": f"call_{n}", "type": "function", "function": {"name": "shell", "arguments": "{}"}}
    messages: list[dict[str, Any]] = [{"role": "assistant", "content": None, "tool_calls": [call]}]
    if result is not None:
        messages.append({"role": "tool", "tool_call_id": f"call_{n}", "content": result})
    return messages


def test_a_turn_in_progress_stays_whole_under_turns_and_tool_uses_clears_inside_it(
    tmp_path: Path,
) -> None:
    body = "\n".join(f"output line {i}" for i in range(200))
    messages = [{"role": "user", "content": "build it"}]
    for n in range(1, 6):
        messages += _call(n, body)
    messages += _call(6, None)  # the agent is waiting for this one
    path = _chat(tmp_path / "chat.json", messages)

    turns = edit_session(path, Policy(keep_turns=0), dry_run=True).as_json()
    assert turns["changed"] == []
    explained = turns["nothing_to_clear"]
    assert explained["protected"] == {"in the turn in progress": 5, "without a result yet": 1}
    assert explained["suggestion"]["option"] == "--policy tool-uses --keep-tool-uses 3"

    uses = edit_session(path, Policy(kind="tool-uses", keep_turns=0), dry_run=True).as_json()
    assert [c["tool_call_id"] for c in uses["changed"]] == ["call_1", "call_2", "call_3"]
    assert explained["suggestion"]["tokens"] == uses["cleared_tokens"]
    assert explained["suggestion"]["results"] == 3


def test_help_names_the_default_policy_and_the_readme_agrees(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["edit", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "tool-uses (the default) keeps the last N tool uses" in shown
    assert "default 3 under the tool-uses policy" in shown
    readme = " ".join((ONE_TURN.parents[2] / "README.md").read_text(encoding="utf-8").split())
    assert "`--policy tool-uses` (**the default**): the last N tool uses stay" in readme
    assert "`--policy turns`: the last N turns stay whole" in readme

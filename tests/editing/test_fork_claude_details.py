"""Details of Claude Code forks and of the command line: persisted-output replacements of a
cleared result are dropped, inputs can be cleared, the text preview, one-line errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ctxtop.engine.cli.main import main
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks.edit import edit_session

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = (
    ROOT / "tests/sessions/data/generated/claude-code/calc-main/"
    "e6da809c-ea6a-48e8-8ca6-02bf23adae92.jsonl"
)
CLEARED = "toolu_01b555a6e12c2c4d4eb2bf07"  # the git log call, in the context's first turn


def _copy(tmp_path: Path, extra: list[dict[str, object]] | None = None) -> Path:
    target = tmp_path / SAMPLE.name
    shutil.copyfile(SAMPLE, target)
    if extra:
        with open(target, "a", encoding="utf-8") as handle:
            handle.writelines(json.dumps(record) + "\n" for record in extra)
    return target


def test_replacements_of_cleared_results_are_dropped(tmp_path: Path) -> None:
    replacement = {
        "type": "content-replacement",
        "sessionId": SAMPLE.stem,
        "replacements": [
            {"kind": "tool-result", "toolUseId": CLEARED, "replacement": "<persisted-output>a"},
            {
                "kind": "tool-result",
                "toolUseId": "toolu_other",
                "replacement": "<persisted-output>b",
            },
        ],
    }
    source = _copy(tmp_path, [replacement])
    outcome = edit_session(source, Policy(keep_turns=0)).as_json()
    assert [c["tool_call_id"] for c in outcome["changed"]] == [CLEARED]
    records = [json.loads(line) for line in Path(outcome["fork"]).read_text().splitlines()]
    kept = [r for r in records if r.get("type") == "content-replacement"]
    assert kept[0]["replacements"] == [replacement["replacements"][1]]  # type: ignore[index]
    assert kept[0]["sessionId"] == outcome["session_id"]


def test_clear_inputs_clears_long_strings_of_the_call(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    content = "x = 1\n" * 200
    messages = [
        {"role": "user", "content": "write it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_w",
                    "type": "function",
                    "function": {
                        "name": "write_file",
                        "arguments": json.dumps({"path": "a.py", "content": content}),
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_w", "content": "wrote a.py (200 lines)"},
        {"role": "user", "content": "thanks"},
    ]
    path.write_text(json.dumps(messages), encoding="utf-8")
    plain = edit_session(path, Policy(keep_turns=1), dry_run=True).as_json()
    assert plain["changed"] == []  # the placeholder would be longer than this short result
    outcome = edit_session(path, Policy(keep_turns=1, clear_inputs=True)).as_json()
    [change] = outcome["changed"]
    assert change["tool_call_id"] == "call_w" and change["input_cleared"]
    fork = json.loads(Path(outcome["fork"]).read_text(encoding="utf-8"))
    arguments = json.loads(fork[1]["tool_calls"][0]["function"]["arguments"])
    assert arguments["path"] == "a.py" and content not in arguments["content"]
    assert outcome["tokens_before"] - outcome["tokens_after"] >= 500  # 1200 chars of input gone


def test_text_preview_and_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _copy(tmp_path)
    assert main(["edit", str(source), "--keep-cycles", "0", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "1 tool result changes:" in out and "dry run: nothing written" in out
    assert "cache rewrite:" in out and "run the command again: git log" in out
    # Its requests teach the session's tokenizer factor: the figures are calibrated.
    assert " tokens (calibrated) after the first edit" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == [SAMPLE.name]
    assert main(["edit", str(source), "--keep-cycles", "0"]) == 0
    out = capsys.readouterr().out
    assert "resume with: cd /home/dev-a/projects/calc-main && claude --resume " in out
    assert main(["edit", str(tmp_path / "missing.jsonl")]) != 0
    err = capsys.readouterr().err.strip()
    assert "missing.jsonl" in err and len(err.splitlines()) == 1


def test_a_sub_agents_own_log_has_the_tool_results_the_report_shows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``edit --dry-run`` on a sub-agent's file said "no tool results the model still sees"
    while ``report`` counted its Bash call: every line of such a file is a sidechain line, and
    the edit skipped them as another window's."""
    subagent = (
        Path(__file__).resolve().parents[2]
        / "sample_sessions/claude-code/projects/-home-dev-projects-calc-subagent"
        / "4ab7166e-a25a-4acc-8ccc-0d6ad17b34a0/subagents/agent-a06fe88f910f87fbb.jsonl"
    )
    assert main(["report", str(subagent), "--json"]) == 0
    calls = sum(tool["calls"] for tool in json.loads(capsys.readouterr().out)["tools"])
    assert calls == 1
    assert main(["edit", str(subagent), "--dry-run", "--json"]) == 0
    outcome = json.loads(capsys.readouterr().out)
    assert outcome["tool_uses"] == calls
    assert outcome["nothing_to_clear"]["reason"] == "its only tool use is among the last 3 kept"

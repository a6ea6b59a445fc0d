"""The text commands print log-derived strings (model, cwd, tool names and results, file
names): escape sequences in them are shown, never sent to the terminal as controls; an error
stays one line whatever the file name holds. (The dashboard's side is tested in tui.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import run_cli

# Clear screen, set the window title, write the clipboard (OSC 52), 8-bit CSI, bidi override.
ATTACKS = "\x1b[2J\x1b]0;owned\x07\x1b]52;c;ZWNobyBvd25lZA==\x07\x9b31m\u202eevil"
CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e")


def _session(tmp_path: Path) -> Path:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": f"shell{ATTACKS}", "arguments": json.dumps({"cmd": ATTACKS})},
    }
    usage = {"prompt_tokens": 900, "completion_tokens": 20}
    messages = [
        {"role": "system", "content": f"system {ATTACKS}"},
        {"role": "user", "content": f"{ATTACKS} run the tests"},
        {"role": "assistant", "model": f"gpt-5{ATTACKS}", "content": None, "tool_calls": [call],
         "usage": usage},
        {"role": "tool", "tool_call_id": "call_1", "content": f"{ATTACKS}\n" * 300},
        {"role": "assistant", "model": "gpt-5", "content": f"done {ATTACKS}", "usage": usage},
        {"role": "user", "content": "and now?"},
        {"role": "assistant", "model": "gpt-5", "content": "nothing else", "usage": usage},
    ]  # fmt: skip
    path = tmp_path / "session.json"
    path.write_text(json.dumps(messages), "utf-8")
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "--breakdown"],
        ["edit", "--dry-run", "--keep-cycles", "0"],
        ["compact", "--dry-run", "--keep-rounds", "1"],
    ],
)
def test_escape_sequences_from_the_log_are_shown_not_obeyed(
    tmp_path: Path, argv: list[str]
) -> None:
    path = _session(tmp_path)
    ended = run_cli(argv[0], str(path), *argv[1:])
    assert ended.code == 0, ended.err
    for control in CONTROLS:
        assert control not in ended.out, repr(control)
    assert "\\x1b]52;" in ended.out or "\\x1b[2J" in ended.out


def test_compactions_show_the_log_s_escape_sequences(tmp_path: Path) -> None:
    """A user message of a compacted Claude Code session that holds escape sequences."""
    sample = (
        Path(__file__).resolve().parents[2] / "sample_sessions/claude-code/projects/"
        "-home-dev-projects-calc-main/ff656323-5d3c-47d4-a01f-e8bc70c19faf.jsonl"
    )
    request = "The div function in src/calc/ops.py"
    text = sample.read_text(encoding="utf-8")
    assert json.dumps(request)[1:-1] in text
    path = tmp_path / sample.name
    path.write_text(text.replace(request, json.dumps(ATTACKS)[1:-1] + request), "utf-8")
    ended = run_cli("compactions", str(path))
    assert ended.code == 0, ended.err
    assert "U1" in ended.out and "\\x1b[2J" in ended.out
    for control in CONTROLS:
        assert control not in ended.out, repr(control)


def test_an_error_stays_one_line_whatever_the_file_name_holds(tmp_path: Path) -> None:
    path = tmp_path / "evil\nctxtop: fake second line\x1b[2J.jsonl"
    path.write_text("this is not a session\n")
    ended = run_cli("report", str(path))
    assert ended.code == 2
    assert len(ended.err.splitlines()) == 1, ended.err
    assert "\x1b" not in ended.err


def test_sessions_lists_one_line_per_session_whatever_the_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    projects = tmp_path / ".claude" / "projects" / "p"
    projects.mkdir(parents=True)
    (projects / "evil\nsecond line\x1b[2J.jsonl").write_text('{"x": 1}\n')
    (projects / "plain.jsonl").write_text('{"x": 1}\n')
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / ".claude"))
    ended = run_cli("sessions", "--agent", "claude-code")
    assert ended.code == 0, ended.err
    rows = ended.out.splitlines()
    assert len(rows) == 3, ended.out  # the header and one row per file
    assert "\x1b" not in ended.out

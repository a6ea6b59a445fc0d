"""``ctxtop edit`` and ``ctxtop undo`` from the command line, and the action log."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ctxtop.engine.cli.main import main
from ctxtop.engine.editing import action_log
from ctxtop.engine.editing.atomic import safe_name, write_new
from ctxtop.engine.errors import CtxtopError

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_sessions/openai-messages/agent-loop.jsonl"


def _edit(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(["edit", str(path), "--keep-cycles", "0", "--json"]) == 0
    result: dict[str, object] = json.loads(capsys.readouterr().out)
    return result


def test_edit_then_undo_removes_the_fork(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "agent-loop.jsonl"
    shutil.copyfile(SAMPLE, source)
    outcome = _edit(source, capsys)
    for key in ("fork", "session_id", "resume_command", "tokens_before", "tokens_after"):
        assert key in outcome
    assert {"cache_rewrite_tokens", "break_even_requests", "changed"} <= set(outcome)
    fork = Path(str(outcome["fork"]))
    assert fork.exists()
    assert main(["undo", "--list"]) == 0
    assert str(fork) in capsys.readouterr().out
    logged = action_log.read_actions()
    assert logged[-1]["kind"] == "edit" and logged[-1]["fork"] == str(fork)
    assert main(["undo"]) == 0
    assert "removed" in capsys.readouterr().out
    assert not fork.exists() and source.exists()
    assert action_log.read_actions()[-1]["kind"] == "undo"
    assert main(["undo", "--list"]) == 0
    assert "no forks" in capsys.readouterr().out


def test_undo_keeps_a_fork_the_agent_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "agent-loop.jsonl"
    shutil.copyfile(SAMPLE, source)
    fork = Path(str(_edit(source, capsys)["fork"]))
    with open(fork, "a", encoding="utf-8") as handle:
        handle.write("\n")
    assert main(["undo"]) != 0
    assert "--force" in capsys.readouterr().err
    assert fork.exists()
    assert main(["undo", "--force"]) == 0
    assert not fork.exists()


def test_fork_names_are_safe_and_never_overwrite(tmp_path: Path) -> None:
    for bad in ("../x", "/etc/passwd", "a\nb", "a\x00b", "..", "x/../y", "name\n"):
        with pytest.raises(CtxtopError):
            safe_name(bad)
    write_new(tmp_path, "a.jsonl", b"one")
    with pytest.raises(CtxtopError, match="already exists"):
        write_new(tmp_path, "a.jsonl", b"two")
    assert (tmp_path / "a.jsonl").read_bytes() == b"one"
    assert [p.name for p in tmp_path.iterdir()] == ["a.jsonl"]


def test_an_agent_appending_meanwhile_is_reported_and_the_fork_can_be_undone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import ctxtop.engine.forks.transaction as fork_module

    source = tmp_path / "agent-loop.jsonl"
    shutil.copyfile(SAMPLE, source)

    def agent_appends_then_write(directory: Path, name: str, data: bytes, **how: Any) -> Path:
        with open(source, "a", encoding="utf-8") as handle:  # the agent, still running
            handle.write('{"role": "user", "content": "one more thing"}\n')
        return write_new(directory, name, data, **how)

    monkeypatch.setattr(fork_module, "write_new", agent_appends_then_write)
    assert main(["edit", str(source), "--keep-cycles", "0"]) == 0
    out = capsys.readouterr().out
    assert "warning:" in out and "changed while ctxtop read it" in out
    fork = Path(str(action_log.live_forks()[-1]["fork"]))
    assert fork.exists() and "one more thing" not in fork.read_text(encoding="utf-8")
    assert main(["undo"]) == 0
    assert not fork.exists()


def test_an_agent_file_gone_meanwhile_is_reported_and_the_fork_is_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import ctxtop.engine.forks.transaction as fork_module

    source = tmp_path / "agent-loop.jsonl"
    shutil.copyfile(SAMPLE, source)

    def agent_removes_then_write(directory: Path, name: str, data: bytes, **how: Any) -> Path:
        source.unlink(missing_ok=True)  # the agent (or a log rotation) removed its file
        return write_new(directory, name, data, **how)

    monkeypatch.setattr(fork_module, "write_new", agent_removes_then_write)
    assert main(["edit", str(source), "--keep-cycles", "0"]) == 0
    out = capsys.readouterr().out
    assert "warning:" in out and "cannot read it again" in out
    fork = Path(str(action_log.live_forks()[-1]["fork"]))
    assert fork.exists()
    assert main(["undo"]) == 0
    assert not fork.exists()


def test_exclude_adds_to_the_memory_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    messages = []
    for n, tool in enumerate(("memory", "read_file", "grep", "read_file")):
        messages += [
            {"role": "user", "content": f"q{n}"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{n}",
                        "type": "function",
                        "function": {"name": tool, "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"c{n}", "content": "result text " * 40},
        ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    argv = ["edit", str(path), "--keep-cycles", "0", "--exclude", "grep", "--dry-run", "--json"]
    assert main(argv) == 0
    changed = json.loads(capsys.readouterr().out)["changed"]
    assert [c["tool_call_id"] for c in changed] == ["c1", "c3"]
    with pytest.raises(SystemExit) as exited:
        main(["edit", str(path), "--keep-cycles", "-1"])
    assert exited.value.code == 2
    assert "must be 0 or more" in capsys.readouterr().err

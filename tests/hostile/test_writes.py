"""Every file ctxtop writes is new, complete or absent: a full disk or a failed rename leaves
the agent's file, earlier forks and the action log as they were, with a one-line error; names
from a log never lead a write outside its directory; symlinks in the target are not followed."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_run import SAMPLES, run_cli, run_offload_edit, run_subprocess

from ctxtop.engine.editing import action_log, atomic
from ctxtop.engine.editing.atomic import write_new
from ctxtop.engine.errors import CtxtopError

SAMPLE = SAMPLES["openai-messages"]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files(root: Path) -> set[Path]:
    return {path for path in root.rglob("*") if path.is_file() or path.is_symlink()}


def _session(tmp_path: Path, sample: Path = SAMPLE) -> Path:
    directory = tmp_path / "agent"
    directory.mkdir()
    source = directory / sample.name
    shutil.copyfile(sample, source)
    return source


def _one_error_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ctxtop: "), err
    return lines[0]


@pytest.mark.parametrize("command", ["edit", "compact"])
def test_a_full_disk_changes_nothing(tmp_path: Path, command: str) -> None:
    """The disk fills up (writes past a size limit fail, as with ENOSPC) during the second run:
    one error line; the session, the first fork and the action log are unchanged; no temp file
    is left behind. (A session with something to compact: the chat sample's compaction would
    not be smaller, which compact refuses before writing.)"""
    source = _session(tmp_path, SAMPLE if command == "edit" else SAMPLES["claude-code"])
    first = run_cli("edit", str(source), "--keep-cycles", "0", "--json")
    assert first.code == 0, first.err
    fork = Path(json.loads(first.out)["fork"])
    before = {path: _digest(path) for path in _files(source.parent)}
    log_before = action_log.log_path().read_bytes()
    args = ["--keep-cycles", "0"] if command == "edit" else ["--keep-rounds", "0"]
    ended = run_subprocess(command, str(source), *args, file_size_limit=1024)
    assert ended.code == 2
    line = _one_error_line(ended.err)
    assert "not written" in line or "nothing was written" in line
    assert {path: _digest(path) for path in _files(source.parent)} == before
    assert fork in before
    assert action_log.log_path().read_bytes() == log_before


def _fail(*args: object, **kwargs: object) -> None:
    raise OSError(5, "Input/output error")


def test_a_failed_link_and_rename_leave_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _session(tmp_path)
    before = _files(source.parent)
    monkeypatch.setattr(atomic.os, "link", _fail)
    monkeypatch.setattr(atomic.os, "replace", _fail)
    ended = run_cli("edit", str(source), "--keep-cycles", "0")
    assert ended.code == 2
    line = _one_error_line(ended.err)
    assert "not written" in line or "nothing was written" in line
    assert _files(source.parent) == before
    assert not action_log.log_path().exists() or not action_log.live_forks()


def test_offloaded_files_go_when_the_fork_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The large-result files are written first; if the fork then fails they are removed, so
    nothing is left that no action in the log accounts for."""
    source = _big_results_session(tmp_path / "agent", ["call_1", "call_2"])
    results = tmp_path / "results"
    real_link = os.link

    def full_in_the_agent_dir(src: str, dst: str, *args: object, **kwargs: Any) -> None:
        if Path(dst).parent == source.parent:
            raise OSError(28, "No space left on device")
        real_link(src, dst, *args, **kwargs)

    real_open = os.open

    def no_claim_in_the_agent_dir(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if Path(path).parent == source.parent and flags & os.O_CREAT:
            raise OSError(28, "No space left on device")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(atomic.os, "link", full_in_the_agent_dir)
    monkeypatch.setattr(atomic.os, "open", no_claim_in_the_agent_dir)
    ended = run_offload_edit(source, results, "20")
    assert ended.code == 2
    _one_error_line(ended.err)
    assert results.exists()  # the results were written before the fork failed
    assert _files(results) == set()


def test_the_action_log_cannot_be_written(tmp_path: Path) -> None:
    """The fork is written but cannot be recorded (so undo could never find it): it is removed
    again and the error says why."""
    source = _session(tmp_path)
    before = _files(source.parent)
    log = action_log.log_path()
    log.parent.mkdir(parents=True, exist_ok=True)
    log.mkdir()  # a directory where the log file goes: appending fails
    ended = run_cli("edit", str(source), "--keep-cycles", "0")
    assert ended.code == 2
    assert str(log) in _one_error_line(ended.err)
    assert _files(source.parent) == before


@pytest.mark.parametrize("dangling", [False, True])
def test_a_symlink_at_the_target_name_is_not_followed(tmp_path: Path, dangling: bool) -> None:
    outside = tmp_path / "outside.txt"
    if not dangling:
        outside.write_text("keep me")
    target_dir = tmp_path / "target"
    target_dir.mkdir()
    (target_dir / "fork.jsonl").symlink_to(outside)
    with pytest.raises(CtxtopError, match="already exists"):
        write_new(target_dir, "fork.jsonl", b"data")
    assert outside.exists() != dangling
    if not dangling:
        assert outside.read_text() == "keep me"
    assert sorted(p.name for p in target_dir.iterdir()) == ["fork.jsonl"]


def test_without_hard_links_the_target_is_still_created_exclusively(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a file system without hard links the fallback rename must not replace a file (or a
    symlink) that appeared under the target name."""
    monkeypatch.setattr(atomic.os, "link", _fail)
    (tmp_path / "taken.jsonl").symlink_to(tmp_path / "not-there-yet.txt")  # dangling
    with pytest.raises(CtxtopError, match="already exists"):
        write_new(tmp_path, "taken.jsonl", b"data")
    assert (tmp_path / "taken.jsonl").is_symlink()
    assert write_new(tmp_path, "free.jsonl", b"data").read_bytes() == b"data"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["free.jsonl", "taken.jsonl"]


HOSTILE_CALL_IDS = ["../../escaped", "/tmp/absolute", "a\x00b", "line\nbreak", "..", "."]


def _big_results_session(directory: Path, call_ids: list[str]) -> Path:
    """An OpenAI-format session with one large tool result per call id."""
    messages = [{"role": "user", "content": "look"}]
    for n, call_id in enumerate(call_ids):
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [{"id": call_id,
             "type": "function", "function": {"name": "read", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": call_id, "content": f"result {n} " * 400},
        ]  # fmt: skip
    messages.append({"role": "user", "content": "thanks"})
    directory.mkdir(exist_ok=True)
    source = directory / "session.json"
    source.write_text(json.dumps(messages))
    return source


def test_call_ids_from_the_log_stay_inside_the_results_directory(tmp_path: Path) -> None:
    directory = tmp_path / "agent"
    source = _big_results_session(directory, HOSTILE_CALL_IDS)
    results = tmp_path / "deep" / "results"
    everything_before = _files(tmp_path)
    ended = run_offload_edit(source, results, "50", "--json")
    assert ended.code == 0, ended.err
    outcome = json.loads(ended.out)
    new = _files(tmp_path) - everything_before
    fork = Path(outcome["fork"])
    assert new == {fork, *(Path(name) for name in outcome["offloaded"])}
    assert fork.parent == directory
    assert all(Path(name).parent.parent == results for name in outcome["offloaded"])
    assert len(outcome["offloaded"]) == len(HOSTILE_CALL_IDS)


@pytest.mark.parametrize("name", ["sess\nion.json", "-rf.json", "..json", ".hidden.json"])
def test_a_hostile_session_file_name_gives_a_plain_fork_name(tmp_path: Path, name: str) -> None:
    source = tmp_path / name
    shutil.copyfile(SAMPLES["openai-document"], source)
    ended = run_cli("edit", str(source), "--keep-cycles", "0", "--json")
    assert ended.code == 0, ended.err
    fork = Path(json.loads(ended.out)["fork"])
    assert fork.parent == tmp_path
    assert "\n" not in fork.name and not fork.name.startswith(("-", "."))


def test_a_cwd_from_the_log_cannot_inject_into_the_resume_command(tmp_path: Path) -> None:
    cwd = "/tmp/x'; touch /tmp/pwned; echo '\n$(reboot)"
    lines = SAMPLES["claude-code"].read_bytes().splitlines()
    out = []
    for raw in lines:
        record = json.loads(raw)
        if isinstance(record, dict) and "cwd" in record:
            record["cwd"] = cwd
        out.append(json.dumps(record).encode())
    source = tmp_path / SAMPLES["claude-code"].name
    source.write_bytes(b"\n".join(out) + b"\n")
    ended = run_cli("edit", str(source), "--keep-cycles", "0", "--json")
    assert ended.code == 0, ended.err
    command = json.loads(ended.out)["resume_command"]
    words = shlex.split(command)
    assert words[:2] == ["cd", cwd] and words[2] == "&&"


def test_config_init_does_not_write_through_a_dangling_symlink(tmp_path: Path) -> None:
    """A dangling symlink where the settings file goes: ``exists()`` says no, and a plain write
    would create the link's target wherever it points."""
    from ctxtop.engine.config import config_path

    target = tmp_path / "elsewhere" / "planted.yaml"
    target.parent.mkdir()
    config = config_path()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.symlink_to(target)
    ended = run_cli("config", "--init")
    assert ended.code == 2
    assert "already exists" in _one_error_line(ended.err)
    assert not target.exists()


def test_the_disk_fills_up_in_the_middle_of_the_action_log_line(tmp_path: Path) -> None:
    """The fork fits but the action log's new line is cut off by the full disk: the edit fails
    (its fork removed, since undo could not find it), and the torn line does not swallow the
    next action recorded."""
    source = _session(tmp_path)
    log = action_log.log_path()
    log.parent.mkdir(parents=True, exist_ok=True)
    earlier = {"id": "earlier", "kind": "note", "padding": "p" * 100_000}
    log.write_text(json.dumps(earlier) + "\n")
    before = _files(source.parent)
    ended = run_subprocess(
        "edit", str(source), "--keep-cycles", "0", file_size_limit=log.stat().st_size + 60
    )
    assert ended.code == 2, ended.err
    assert str(log) in _one_error_line(ended.err)
    assert _files(source.parent) == before
    again = run_cli("edit", str(source), "--keep-cycles", "0", "--json")
    assert again.code == 0, again.err
    fork = json.loads(again.out)["fork"]
    assert next(entry["id"] for entry in action_log.read_actions()) == "earlier"
    assert [entry["fork"] for entry in action_log.live_forks()] == [fork]


@pytest.mark.parametrize("command", ["edit", "compact"])
@pytest.mark.parametrize("limit", [64, 1024])
def test_a_full_disk_error_names_the_session_or_the_fork(
    tmp_path: Path, command: str, limit: int
) -> None:
    """Wherever the disk fills up (the private copy read first, the fork's preview copy, the
    fork itself), the one error line names the user's files, never ctxtop's scratch copies."""
    source = _session(tmp_path)
    args = ["--keep-cycles", "0"] if command == "edit" else ["--keep-rounds", "0"]
    ended = run_subprocess(command, str(source), *args, file_size_limit=limit)
    assert ended.code == 2
    line = _one_error_line(ended.err)
    assert "ctxtop-read-" not in line and "ctxtop-preview-" not in line
    assert "ctxtop-compact-" not in line
    assert str(source.parent) in line or str(source) in line, line

"""``ctxtop undo`` removes what ctxtop wrote, from anywhere, and nothing else.

Paths are logged absolute; each file is checked against its naming, its directory and the size
and hash logged when it was written before anything is removed (a forged or stale log line
removes nothing, ``--force`` included); a ctxtop killed between a fork's rename and its log line
leaves an "unlogged" fork that ``undo --list`` shows and ``undo`` removes; one killed while
writing leaves a temporary that the next run removes."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import ROOT, SAMPLES, run_cli, run_offload_edit
from test_secrets import _leaky_session

from ctxtop.engine.editing import action_log
from ctxtop.engine.forks.compact import compact_session
from ctxtop.engine.sessions.fork_mark import marked_fork


def _one_line_refusal(ended_err: str, code: int) -> None:
    assert code == 2, ended_err
    assert len(ended_err.splitlines()) == 1 and "Traceback" not in ended_err, ended_err
    assert "not removed" in ended_err


def test_undo_from_another_directory_removes_the_fork_and_its_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "proj").mkdir()
    _leaky_session(tmp_path / "proj")
    monkeypatch.chdir(tmp_path)
    edited = run_offload_edit(Path("proj/leaky.json"), Path("results"), "200", "--json")
    assert edited.code == 0, edited.err
    outcome = json.loads(edited.out)
    fork = tmp_path / "proj" / Path(outcome["fork"]).name
    files = [
        tmp_path / "results" / outcome["session_id"] / Path(f).name for f in outcome["offloaded"]
    ]
    assert fork.is_file() and files and all(f.is_file() for f in files)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    listed = run_cli("undo", "--list")
    assert str(fork) in listed.out
    ended = run_cli("undo")
    assert ended.code == 0, ended.err
    assert f"{fork}: removed" in ended.out
    assert not fork.exists() and not any(f.exists() for f in files)
    assert (tmp_path / "proj" / "leaky.json").is_file()
    assert "no forks" in run_cli("undo", "--list").out


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("force", [False, True])
def test_a_forged_log_line_removes_nothing(tmp_path: Path, force: bool) -> None:
    agent = tmp_path / "1af7c0de-0000-4000-8000-000000000001.jsonl"
    agent.write_bytes(SAMPLES["claude-code"].read_bytes())
    other = tmp_path / "notes.txt"
    other.write_text("the user's own file")
    # As the issue found it: the agent's session as the fork, any file as "offloaded".
    action_log.record("edit", fork=str(agent), fork_sha256=_sha(agent), offloaded=[str(other)])
    flags = ["--force"] if force else []
    ended = run_cli("undo", *flags)
    _one_line_refusal(ended.err, ended.code)
    assert "no size and hash were recorded" in ended.err
    # Forged with sizes and hashes too: the names are not ctxtop's, nor the places.
    forged = action_log.record(
        "edit",
        fork=str(agent),
        session_id="0d1e2f3a-0000-4000-8000-00000000beef",
        files=[
            {"path": str(agent), "role": "fork", "size": agent.stat().st_size,
             "sha256": _sha(agent)},
            {"path": str(other), "role": "result", "size": other.stat().st_size,
             "sha256": _sha(other)},
        ],
    )  # fmt: skip
    ended = run_cli("undo", forged["id"], *flags)
    _one_line_refusal(ended.err, ended.code)
    assert "not a fork name ctxtop gives" in ended.err
    assert agent.read_bytes() == SAMPLES["claude-code"].read_bytes()
    assert other.read_text() == "the user's own file"


@pytest.mark.parametrize("unlogged", [False, True], ids=["edit-line", "intent-line"])
def test_a_forged_log_with_the_real_name_size_and_hash_removes_nothing(
    tmp_path: Path, unlogged: bool
) -> None:
    """The issue's case: lines naming Claude Code's own session with its real size and sha256
    and its name as the session id. Only the file itself can prove it is ctxtop's fork."""
    victim = tmp_path / "1af7c0de-0000-4000-8000-000000000001.jsonl"
    original = SAMPLES["claude-code"].read_bytes()
    victim.write_bytes(original)
    file = {"path": str(victim), "role": "fork", "size": len(original), "sha256": _sha(victim)}
    if unlogged:  # an intent no action completed: a fork ctxtop was killed writing
        forged = [{"id": "f0f0f0f0f0f0", "kind": "intent", "time": "2026-11-28T00:00:00", **file}]
    else:
        forged = [
            {"id": "f1f1f1f1f1f1", "kind": "intent", "time": "2026-11-28T00:00:00", **file},
            {"id": "f2f2f2f2f2f2", "kind": "edit", "time": "2026-11-28T00:00:01",
             "fork": str(victim), "session_id": victim.stem,
             "files": [{**file, "intent": "f1f1f1f1f1f1"}]},
        ]  # fmt: skip
    action_log.log_path().parent.mkdir(parents=True, exist_ok=True)
    with action_log.log_path().open("a") as log:
        log.writelines(json.dumps(line) + "\n" for line in forged)
    for flags in ([], ["--force"]):
        ended = run_cli("undo", *flags)
        _one_line_refusal(ended.err, ended.code)
        assert f"carries no ctxtop fork mark for session {victim.stem}" in ended.err
    assert victim.read_bytes() == original


@pytest.mark.parametrize("agent", ["claude-code", "codex", "openai-messages", "openai-document"])
def test_every_agents_fork_carries_the_mark_that_undo_asks_for(tmp_path: Path, agent: str) -> None:
    session = tmp_path / SAMPLES[agent].name
    session.write_bytes(SAMPLES[agent].read_bytes())
    # The engine's compaction: the samples are too small for one the CLI would write (it
    # refuses a compaction that is not smaller), and the mark is the fork writer's either way.
    outcome = compact_session(session, keep_rounds=1).as_json()
    fork = Path(outcome["fork"])
    assert marked_fork(fork.read_bytes()) == outcome["session_id"]
    ended = run_cli("undo")
    assert ended.code == 0 and f"{fork}: removed" in ended.out, ended.err
    assert not fork.exists() and session.read_bytes() == SAMPLES[agent].read_bytes()


def test_a_fork_with_no_place_for_the_mark_is_said_so_when_written_and_kept(
    tmp_path: Path,
) -> None:
    """A bare list of chat messages without any usage: a mark would add a key a chat API reads
    in no message of the log, so the fork has none, and undo cannot prove it ctxtop's."""
    sample = ROOT / "sample_sessions/openai-messages/no-usage.json"
    session = tmp_path / sample.name
    session.write_bytes(sample.read_bytes())
    outcome = compact_session(session, keep_rounds=1).as_json()
    assert any("the fork has no place for ctxtop's mark" in w for w in outcome["warnings"])
    [fork] = [path for path in tmp_path.iterdir() if ".ctxtop-" in path.name]
    ended = run_cli("undo")
    _one_line_refusal(ended.err, ended.code)
    assert "carries no ctxtop fork mark" in ended.err and fork.exists()


def test_a_fork_rewritten_since_is_kept_even_with_force(tmp_path: Path) -> None:
    session = _leaky_session(tmp_path)
    outcome = json.loads(run_cli("edit", str(session), "--keep-tool-uses", "0", "--json").out)
    fork = Path(outcome["fork"])
    fork.write_text("[]")  # not ctxtop's bytes any more (and not an append)
    ended = run_cli("undo", "--force")
    _one_line_refusal(ended.err, ended.code)
    assert fork.read_text() == "[]"
    # An agent that resumed the fork appends: --force lets that go, as before.
    outcome = json.loads(run_cli("edit", str(session), "--keep-tool-uses", "0", "--json").out)
    resumed = Path(outcome["fork"])
    with open(resumed, "a") as handle:
        handle.write("\n")
    assert run_cli("undo").code == 2 and resumed.exists()
    assert run_cli("undo", "--force").code == 0 and not resumed.exists()


# The child kills itself at one point of the write, as a SIGKILL (or power loss) would.
KILLED_AT = {
    "log-line": (
        "from ctxtop.engine.editing import action_log\n"
        "record = action_log.record\n"
        "def dying(kind, *a, **k):\n"
        "    if kind in ('edit', 'compact'):\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return record(kind, *a, **k)\n"
        "action_log.record = dying\n"
    ),
    "rename": (
        "from ctxtop.engine.editing import atomic\n"
        "publish = atomic._publish\n"
        "def dying(temp, target):\n"
        "    if Path(target).parent == Path(sys.argv[2]).resolve().parent:\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return publish(temp, target)\n"
        "atomic._publish = dying\n"
    ),
}


def _killed(point: str, *argv: str) -> None:
    code = (
        "import os, signal, sys\nfrom pathlib import Path\n"
        + KILLED_AT[point]
        + "from ctxtop.engine.cli.main import main\nsys.exit(main(sys.argv[1:]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], cwd=ROOT, env=dict(os.environ),
        capture_output=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr


def _fork_names(directory: Path) -> set[str]:
    return {path.name for path in directory.iterdir() if ".ctxtop-" in path.name}


@pytest.mark.parametrize("command", ["edit", "compact"])
def test_a_fork_whose_log_line_never_came_is_listed_and_undone(
    tmp_path: Path, command: str
) -> None:
    session = _leaky_session(tmp_path)
    extra = ["--keep-tool-uses", "0"] if command == "edit" else ["--keep-rounds", "1"]
    _killed("log-line", command, str(session), *extra)
    [name] = _fork_names(tmp_path)
    fork = tmp_path / name
    listed = run_cli("undo", "--list")
    assert "unlogged" in listed.out and str(fork) in listed.out, listed.out
    [entry] = json.loads(run_cli("undo", "--list", "--json").out)
    ended = run_cli("undo", entry["id"])
    assert ended.code == 0, ended.err
    assert not fork.exists() and session.is_file()
    assert "no forks" in run_cli("undo", "--list").out


def test_a_temporary_left_by_a_kill_is_removed_on_the_next_run(tmp_path: Path) -> None:
    session = _leaky_session(tmp_path)
    _killed("rename", "edit", str(session), "--keep-tool-uses", "0")
    [temp] = [path for path in tmp_path.iterdir() if path.name.endswith(".tmp")]
    assert temp.name.startswith(".ctxtop-")
    mine = tmp_path / ".ctxtop-notes.tmp"  # not of ctxtop's naming: left alone
    mine.write_text("keep")
    listed = run_cli("undo", "--list")
    assert listed.code == 0 and not temp.exists() and mine.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".ctxtop-notes.tmp", "leaky.json"]
    # And the next edit into that directory removes one as well.
    _killed("rename", "edit", str(session), "--keep-tool-uses", "0")
    assert run_cli("edit", str(session), "--keep-tool-uses", "0").code == 0
    assert not [path for path in tmp_path.iterdir() if path.name.endswith("tmp") and path != mine]

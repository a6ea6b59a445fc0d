"""ctxtop and the agent at once: the agent appends while ctxtop writes a fork of the session;
two ctxtop processes edit and undo the same session; the action log stays one JSON line per
action throughout."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from cli_run import ROOT, SUBPROCESS_MAIN, run_cli

from ctxtop.engine.agents.session_reader import read_session
from ctxtop.engine.editing import action_log

# A Claude Code session of several rounds (so that compact has something to summarise).
SAMPLE = (
    ROOT / "tests/sessions/data/generated/claude-code/calc-main/"
    "e6da809c-ea6a-48e8-8ca6-02bf23adae92.jsonl"
)


def _appender(path: Path, lines: list[bytes], stop: threading.Event) -> threading.Thread:
    """The agent: appends the lines again and again, each in two writes (a reader may see half
    a line), until stopped."""

    def run() -> None:
        while not stop.is_set():
            for line in lines:
                if stop.is_set():
                    return
                with open(path, "ab") as out:
                    out.write(line[: len(line) // 2])
                    out.flush()
                    time.sleep(0.001)
                    out.write(line[len(line) // 2 :] + b"\n")

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_forks_written_while_the_agent_appends(tmp_path: Path) -> None:
    source = tmp_path / SAMPLE.name
    shutil.copyfile(SAMPLE, source)
    original = source.read_bytes()
    lines = original.splitlines()[-6:]
    stop = threading.Event()
    agent = _appender(source, lines, stop)
    outcomes = []
    try:
        for command in ("edit", "compact", "edit", "compact"):
            extra = ["--keep-cycles", "0"] if command == "edit" else ["--keep-rounds", "1"]
            ended = run_cli(command, str(source), *extra, "--json")
            assert ended.code == 0, ended.err
            outcomes.append(json.loads(ended.out))
    finally:
        stop.set()
        agent.join(timeout=30)
    grown = source.read_bytes()
    assert grown.startswith(original)  # ctxtop only read it
    for outcome in outcomes:
        fork = Path(outcome["fork"])
        # Every line of the fork is whole: a line the agent was half-way through is left out.
        for number, raw in enumerate(fork.read_bytes().splitlines(), 1):
            json.loads(raw), (fork, number)
        state = read_session(fork)
        assert state.skipped == []
    assert any("changed while ctxtop read it" in " ".join(o["warnings"]) for o in outcomes)


def _ctxtop(*argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", SUBPROCESS_MAIN, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


def _finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=120)
    return process.returncode, out, err


def test_two_ctxtop_processes_on_one_session(tmp_path: Path) -> None:
    source = tmp_path / SAMPLE.name
    shutil.copyfile(SAMPLE, source)
    original = source.read_bytes()
    runs = [
        _ctxtop("edit", str(source), "--keep-cycles", "0", "--json"),
        _ctxtop("compact", str(source), "--json"),
        _ctxtop("edit", str(source), "--keep-cycles", "0", "--json"),
    ]
    results = [_finish(process) for process in runs]
    for code, _, err in results:
        assert code == 0 and "Traceback" not in err, err
    forks = {json.loads(out)["fork"] for _, out, _ in results}
    assert len(forks) == 3 and all(Path(fork).is_file() for fork in forks)
    assert source.read_bytes() == original
    lines = [json.loads(line) for line in action_log.log_path().read_text("utf-8").splitlines()]
    logged = [entry for entry in lines if entry["kind"] in ("edit", "compact")]
    assert len(logged) == 3 and {entry["fork"] for entry in logged} == forks
    # Each fork's intent, logged before it got its name, and completed by its action line.
    intents = {entry["id"]: entry["path"] for entry in lines if entry["kind"] == "intent"}
    assert {intents[entry["files"][0]["intent"]] for entry in logged} == forks
    # Both undo the newest fork at once: it is removed once, and neither fails.
    undos = [_ctxtop("undo"), _ctxtop("undo")]
    ends = [_finish(process) for process in undos]
    for code, _, err in ends:
        assert "Traceback" not in err, err
        assert code == 0 or err.startswith("ctxtop: "), err
    assert sum(1 for code, out, _ in ends if code == 0 and "removed" in out) >= 1
    assert len([fork for fork in forks if Path(fork).exists()]) >= 1
    for line in action_log.log_path().read_text("utf-8").splitlines():
        assert not line or json.loads(line)


def test_the_action_log_stays_one_line_per_action_under_concurrent_appends() -> None:
    """Four writers append entries far larger than a pipe buffer at once: every line is one
    whole entry, none lost."""
    big = "x" * 200_000

    def write(writer: int) -> None:
        for n in range(25):
            action_log.record("edit", fork=f"/tmp/fork-{writer}-{n}", padding=big)

    threads = [threading.Thread(target=write, args=(writer,)) for writer in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    # An empty line may appear (a writer that saw another's line half-way ends it first).
    lines = action_log.log_path().read_text("utf-8").splitlines()
    entries = [json.loads(line) for line in lines if line]
    assert sorted(entry["fork"] for entry in entries) == sorted(
        f"/tmp/fork-{w}-{n}" for w in range(4) for n in range(25)
    )
    assert {entry["padding"] for entry in entries} == {big}

"""Live apply with the real agents: the real Claude Code and Codex CLIs talk to ``ctxtop proxy``
(the command, a real process), which forwards to the project's model server on 127.0.0.1. After
``ctxtop edit --live`` / ``ctxtop compact --live`` on the session the agent wrote, the model
server receives the placeholders or the summary on the agent's next turn, the agent carries on
(the turn completes), its log keeps the originals, and ``ctxtop live --stop`` gives the agent's
own requests back."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))

from agents import claude_bin, codex_home
from live_capture import (
    PROMPTS,
    claude_project,
    claude_run,
    claude_script,
    claude_session,
    codex_replies,
    line_of,
    main_requests,
    project_files,
)
from model_server import ModelServer

pytestmark = pytest.mark.slow
CTXTOP = Path(sys.executable).parent / "ctxtop"
PLACEHOLDER = "[ctxtop: old tool result cleared"
COMPACTED = "This session continues an earlier conversation that ctxtop compacted"


def ctxtop(*args: str) -> str:
    done = subprocess.run(
        [str(CTXTOP), *args], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@contextmanager
def ctxtop_proxy(upstream: int) -> Iterator[int]:
    """``ctxtop proxy --port 0`` with every upstream at the model server; its port."""
    url = f"http://127.0.0.1:{upstream}"
    env = dict(os.environ, CTXTOP_PROXY_ANTHROPIC_URL=url, CTXTOP_PROXY_OPENAI_URL=url)
    process = subprocess.Popen(
        [str(CTXTOP), "proxy", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)", first)
        assert found, first + (process.stderr.read() if process.stderr else "")
        yield int(found.group(1))
    finally:
        process.terminate()
        process.wait(timeout=30)


def body_of(number: int) -> str:
    return line_of(number, 10)


def claude_turn(project: Any, numbers: tuple[int, ...], prompt: str, session: str) -> list[str]:
    """One turn of Claude Code through the proxy; the Messages requests the model server got
    (with tools: the conversation's), as JSON text."""
    with ModelServer(messages=claude_script(numbers, project.cwd)) as model:
        with ctxtop_proxy(model.port) as port:
            claude_run(project, port, prompt, session, resume=True)
        return [json.dumps(b) for b in main_requests(model.requests, "/v1/messages")]


def start_claude(tmp_path: Path) -> tuple[Any, str, Path]:
    """Turn 1 of Claude Code (reads file01..file03) through the proxy; its session file."""
    project = claude_project(tmp_path)
    session_id = str(uuid.uuid4())
    with ModelServer(messages=claude_script((1, 2, 3), project.cwd)) as model:
        with ctxtop_proxy(model.port) as port:
            claude_run(project, port, PROMPTS[0], session_id, resume=False)
        first = main_requests(model.requests, "/v1/messages")
    assert body_of(1) in json.dumps(first[-1])  # no plan: the agent's own history
    return project, session_id, claude_session(project, session_id)


def test_claude_code_edit_applied_live_then_stopped(tmp_path: Path) -> None:
    project, session_id, session = start_claude(tmp_path)
    out = ctxtop("edit", str(session), "--live", "--keep-tool-uses", "1")
    assert f"applied live to session {session_id}" in out and "2 old tool results" in out
    sent = claude_turn(project, (4, 5), PROMPTS[1], session_id)
    assert len(sent) == 3  # two tool rounds and the final answer: the turn completed
    for request in sent:
        assert request.count(PLACEHOLDER) == 2
        assert body_of(1) not in request and body_of(2) not in request
        assert body_of(3) in request
    assert body_of(5) in sent[-1]  # the turn in progress as the agent sent it
    log = session.read_text(encoding="utf-8")
    assert body_of(1) in log and PLACEHOLDER not in log  # the agent's log keeps the originals
    measured = [json.loads(line) for line in (live_data() / "proxy" / f"{session_id}.jsonl").open()]
    assert [m["rewritten"] for m in measured if m["path"].startswith("/v1/messages")][-3:] == [
        True
    ] * 3
    assert "edited live" in ctxtop("live")
    ctxtop("live", "--stop", session_id)
    again = claude_turn(project, (), "Which files did you read?", session_id)
    assert PLACEHOLDER not in again[-1] and body_of(1) in again[-1]


def test_claude_code_compaction_applied_live(tmp_path: Path) -> None:
    project, session_id, session = start_claude(tmp_path)
    out = ctxtop("compact", str(session), "--live", "--keep-rounds", "1")
    assert "3 rounds summarised" in out
    sent = claude_turn(project, (4, 5), PROMPTS[1], session_id)
    assert len(sent) == 3
    firsts = set()
    for request in sent:
        messages = json.loads(request)["messages"]
        first = messages[0]["content"]
        assert any(COMPACTED in block["text"] for block in first if block["type"] == "text")
        assert PROMPTS[0] in json.dumps(first)  # the summarised turn's request, kept verbatim
        for gone in (1, 2, 3):
            assert body_of(gone) not in request
        firsts.add(json.dumps(messages[:3]))
    assert len(firsts) == 1  # the same prefix on every request: the cache warms again
    assert body_of(4) in sent[-1] and body_of(5) in sent[-1]
    assert body_of(1) in session.read_text(encoding="utf-8")


def live_data() -> Path:
    return Path(os.environ["CTXTOP_DATA_DIR"])


def codex_turns(tmp_path: Path) -> Iterator[tuple[Any, int, str, Path]]:
    """Codex's first turn through the proxy: (its home, the proxy port, session id, rollout)."""
    with (
        codex_home(tmp_path, codex_replies(), project_files()) as codex,
        ctxtop_proxy(codex.server.port) as port,
    ):
        config = codex.home / ".codex" / "config.toml"
        text = config.read_text(encoding="utf-8")
        config.write_text(text.replace(f":{codex.server.port}/", f":{port}/"), "utf-8")
        rollout = codex.first_session(PROMPTS[0])
        yield codex, port, rollout.stem[-36:], rollout


@pytest.mark.parametrize("action", ["edit", "compact"])
def test_codex_applied_live(tmp_path: Path, action: str) -> None:
    for codex, _port, session_id, rollout in codex_turns(tmp_path):
        if action == "edit":
            out = ctxtop("edit", str(rollout), "--live", "--keep-tool-uses", "1")
        else:
            out = ctxtop("compact", str(rollout), "--live", "--keep-rounds", "1")
        assert f"applied live to session {session_id}" in out
        seen = len(codex.server.requests)
        codex.run("resume", session_id, PROMPTS[1])
        sent = [json.dumps(b) for b in main_requests(codex.server.requests[seen:], "/responses")]
        assert len(sent) == 3  # two calls and the final answer: the turn completed
        for request in sent:
            for gone in (1, 2):
                assert body_of(gone) not in request
            if action == "edit":
                assert request.count(PLACEHOLDER) == 2 and body_of(3) in request
            else:
                assert COMPACTED in request and body_of(3) not in request
        assert body_of(5) in sent[-1]
        assert body_of(1) in rollout.read_text(encoding="utf-8")


@pytest.mark.parametrize("action", ["edit", "compact"])
def test_claude_code_applied_in_the_middle_of_a_turn(tmp_path: Path, action: str) -> None:
    """The edit (or compaction) is applied while Claude Code runs the third tool call of a long
    turn (a command that waits for the test): the requests after it carry the placeholders (or
    the summary, with the turn's request), the round in progress is as sent, and the turn
    completes."""
    project = claude_project(tmp_path)
    session_id = str(uuid.uuid4())
    script = claude_script((1, 2, 3, 4), project.cwd)
    # The third call waits until the test has applied the plan (the file ``go`` appears).
    wait = "while [ ! -e go ]; do sleep 0.1; done; cat file03.txt"
    script[2] = {"call": "Bash", "input": {"command": wait}}
    output = tmp_path / "claude-output.txt"  # a file, not a pipe: it never fills up
    with (
        ModelServer(messages=script) as model,
        ctxtop_proxy(model.port) as port,
        output.open("w", encoding="utf-8") as out_file,
    ):
        claude = subprocess.Popen(
            [str(claude_bin()), "-p", PROMPTS[0], "--session-id", session_id,
             "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"],
            cwd=project.cwd, env=project.env(port),
            stdout=out_file, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        try:
            # The third call is in the log (not only the second result): under load Claude Code
            # writes the result of call 2 a moment before the call it runs next.
            session = wait_for_log(project, session_id, "while [ ! -e go ]")
            if action == "edit":
                out = ctxtop("edit", str(session), "--live", "--keep-tool-uses", "1")
                assert "2 old tool results cleared" in out  # 1 and 2; the running call 3 stays
            else:
                out = ctxtop("compact", str(session), "--live", "--keep-rounds", "1")
                assert "2 rounds summarised" in out  # 1 and 2; the running round 3 stays
            (project.cwd / "go").touch()
            claude.wait(timeout=180)
        finally:
            if claude.poll() is None:
                claude.kill()
                claude.wait()
        stdout = output.read_text(encoding="utf-8")
        assert claude.returncode == 0, stdout[-2000:]
        sent = [json.dumps(b) for b in main_requests(model.requests, "/v1/messages")]
    assert PLACEHOLDER not in sent[2] and COMPACTED not in sent[2]  # before: the agent's own
    if action == "edit":
        assert len(sent) == 5  # four tool rounds and the final answer
        for request in sent[3:]:  # after: results 1 and 2 cleared, 3 and 4 as the agent sent
            assert request.count(PLACEHOLDER) == 2 and body_of(1) not in request
            assert body_of(2) not in request and body_of(3) in request
    else:
        # The scripted model answers by its responses since the prompt: after the summary
        # replaced rounds 1 and 2 it calls for file02 to file04 again (7 requests), as a model
        # that lost those results might; the turn still completes.
        assert len(sent) == 7
        assert body_of(2) not in sent[3] and body_of(3) in sent[3]
        for request in sent[3:]:
            assert COMPACTED in request and PROMPTS[0] in request and body_of(1) not in request
    assert "Read 4 files" in stdout


def wait_for_log(project: Any, session_id: str, text: str) -> Path:
    """The session's log once it holds ``text`` (the agent wrote that result)."""
    for _ in range(1200):
        found = list((project.home / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))
        if found and text in found[0].read_text(encoding="utf-8"):
            return found[0]
        time.sleep(0.1)
    raise AssertionError(f"the agent never wrote {text!r}")

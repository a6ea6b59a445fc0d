"""Live mode with the real Claude Code CLI: claude -> a byte tap -> ctxtop proxy -> the model
server, streaming. A turn of several tool calls completes, the model server receives exactly the
bytes the CLI sent, and each model request is measured under the CLI's own session id."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from agents import ClaudeProject, claude_bin
from measurement_lines import read_measurements
from model_server import ModelServer
from one_turn import FINAL, PROMPT, claude_script, project_files
from tap import Tap, ctxtop_proxy

from ctxtop.engine.live.session import LiveSession

ROUNDS = 4  # Bash, Bash, Bash, Read, then the answer


def test_claude_code_runs_a_multi_tool_turn_through_the_proxy(
    tmp_path: Path, isolated_dirs: Path
) -> None:
    claude = claude_bin()
    home, cwd = tmp_path / "home", tmp_path / "project"
    cwd.mkdir(parents=True)
    for name, text in project_files(ROUNDS).items():
        (cwd / name).write_text(text, encoding="utf-8")
    project = ClaudeProject(home, cwd, cwd)
    with (
        ModelServer(messages=claude_script(ROUNDS, cwd)) as server,
        ctxtop_proxy(server.port) as proxy,
    ):
        tap = Tap(proxy.port)
        done = subprocess.run(
            [str(claude), "-p", PROMPT, "--output-format", "stream-json", "--verbose",
             "--dangerously-skip-permissions"],
            cwd=cwd, env=project.env(tap.port),
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        tap.close()
        received = server.requests
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    result = [json.loads(line) for line in done.stdout.splitlines() if '"type":"result"' in line]
    assert result and result[-1]["result"] == FINAL
    # Every body the model server got is, byte for byte, in what the CLI sent.
    sent = b"".join(tap.sent)
    assert received and all(request["raw"] in sent for request in received)
    assert sent.count(b"POST /v1/messages") == len(
        [r for r in received if r["path"].startswith("/v1/messages")]
    )
    # The model requests are measured under the session id of the CLI's own log.
    [session] = sorted((home / ".claude" / "projects").glob("*/*.jsonl"))
    lines = read_measurements(session.stem)
    tool_rounds = [line for line in lines if line["tools"]["count"]]
    assert len(tool_rounds) >= ROUNDS + 1
    assert {"Bash", "Read"} <= {tool["name"] for tool in tool_rounds[-1]["tools"]["per_tool"]}
    assert all(line["usage"]["input_tokens"] > 0 for line in tool_rounds)
    assert tool_rounds[-1]["messages"]["kinds"]["tool_result"] > 0
    assert tool_rounds[-1]["breakpoints"]  # Claude Code marks its cache breakpoints
    # The dashboard's view of the CLI's own log shows the system prompt and tools as measured.
    live = LiveSession(session)
    live.poll()
    view = live.view()
    assert view is not None and view.analysis is not None and view.measured is not None
    [system] = [s for s in view.analysis.sections if s.name == "system"]
    assert system.provenance == "measured" and system.tokens == view.measured.outside_log
    # The CLI's key reached the model server, and is in nothing ctxtop wrote.
    key = project.env(0)["ANTHROPIC_API_KEY"].encode()
    assert all(request["headers"].get("x-api-key") == key.decode() for request in received)
    written = [path for path in isolated_dirs.rglob("*") if path.is_file()]
    assert written and not any(key in path.read_bytes() for path in written)

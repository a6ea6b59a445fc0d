"""Two turns of the real Claude Code and Codex CLIs against the project's model server: the
sessions and requests the live-apply tests rewrite, and the generator of ``tests/proxy/data/live``
(``.venv/bin/python tests/proxy/live_capture.py``, see its PROVENANCE.md).

Turn 1 reads ``file01.txt`` .. ``file03.txt`` (one tool call per model response), then answers;
turn 2 (the session resumed) reads ``file04.txt`` and ``file05.txt`` and answers. Each file
holds a marker and lines no other file holds.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))

from agents import ClaudeProject, claude_bin, codex_home
from model_server import ModelServer

TURNS = ((1, 2, 3), (4, 5))
PROMPTS = ("Read file01.txt to file03.txt and list their markers.", "Now read file04 and file05.")
DATA = Path(__file__).resolve().parent / "data" / "live"


def line_of(number: int, line: int) -> str:
    return f"file{number:02d} body line {line:02d} only in this file: {number * 7919 + line}"


def project_files() -> dict[str, str]:
    files = {}
    for number in range(1, 6):
        lines = [f"marker-{number:02d}", *(line_of(number, i) for i in range(1, 31))]
        files[f"file{number:02d}.txt"] = "\n".join(lines) + "\n"
    return files


def claude_script(numbers: tuple[int, ...], cwd: Path) -> list[dict[str, Any]]:
    script: list[dict[str, Any]] = []
    for number in numbers:
        name = f"file{number:02d}.txt"
        if number == 2:
            script.append({"call": "Read", "input": {"file_path": str(cwd / name)}})
        else:
            script.append(
                {"call": "Bash", "input": {"command": f"cat {name}", "description": name}}
            )
    return [*script, {"text": f"Read {len(numbers)} files; each has its marker."}]


def codex_replies() -> list[dict[str, Any]]:
    replies: list[dict[str, Any]] = []
    for numbers in TURNS:
        replies += [
            {"call": "exec_command", "arguments": json.dumps({"cmd": f"cat file{n:02d}.txt"})}
            for n in numbers
        ]
        replies.append({"text": f"Read {len(numbers)} files; each has its marker."})
    return replies


def claude_run(
    project: ClaudeProject, port: int, prompt: str, session_id: str, resume: bool
) -> None:
    """``claude -p PROMPT`` under a fixed session id (a new one, or ``--resume`` it)."""
    flag = "--resume" if resume else "--session-id"
    done = subprocess.run(
        [str(claude_bin()), "-p", prompt, flag, session_id, "--output-format", "stream-json",
         "--verbose", "--dangerously-skip-permissions"],
        cwd=project.cwd, env=project.env(port),
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]


def claude_project(root: Path) -> ClaudeProject:
    """A HOME and a project with the files; ``session`` is set once the CLI wrote it."""
    home, cwd = root / "home", root / "project"
    cwd.mkdir(parents=True)
    for name, text in project_files().items():
        (cwd / name).write_text(text, encoding="utf-8")
    return ClaudeProject(home, cwd, cwd)


def claude_session(project: ClaudeProject, session_id: str) -> Path:
    found = sorted((project.home / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))
    assert len(found) == 1, found
    return found[0]


def main_requests(requests: list[dict[str, Any]], suffix: str) -> list[dict[str, Any]]:
    """The agent's conversation requests (with tools), in order; not side requests."""
    return [
        r["body"]
        for r in requests
        if r["path"].split("?")[0].endswith(suffix) and r["body"].get("tools")
    ]


def trimmed(body: dict[str, Any]) -> dict[str, Any]:
    """The body without the agent's own system prompt and tool schemas (the vendor's text, and
    most of the bytes); the rewriters never touch them."""
    out = dict(body)
    for key in ("system", "tools", "instructions"):
        if key in out:
            out[key] = "[removed: the agent's own text]"
    return out


def _paths(text: str, root: Path) -> str:
    for old, new in ((root / "home", "/home/dev"), (root / "project", "/home/dev/project")):
        text = text.replace(str(old), new)
        text = text.replace(
            re.sub(r"[^a-zA-Z0-9]", "-", str(old)), re.sub(r"[^a-zA-Z0-9]", "-", new)
        )
    return text


def _write(target: Path, text: str, root: Path) -> None:
    text = _paths(text, root)
    assert str(root) not in text
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def generate(out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="live-") as scratch:
        root = Path(scratch) / "claude"
        project = claude_project(root)
        session_id = str(uuid.uuid4())
        bodies: list[dict[str, Any]] = []
        for turn, (numbers, prompt) in enumerate(zip(TURNS, PROMPTS, strict=True)):
            with ModelServer(messages=claude_script(numbers, project.cwd)) as server:
                claude_run(project, server.port, prompt, session_id, resume=turn > 0)
                bodies += main_requests(server.requests, "/v1/messages")
        session = claude_session(project, session_id)
        _write(out / "claude-code" / session.name, session.read_text(encoding="utf-8"), root)
        # the request that sent turn 2's last result: a turn in progress after a whole turn
        body = json.dumps(trimmed(bodies[-1]), ensure_ascii=False, indent=1)
        _write(out / "claude-code" / "request.json", body, root)
        root = Path(scratch) / "codex"
        root.mkdir()
        with codex_home(root, codex_replies(), project_files()) as codex:
            rollout = codex.first_session(PROMPTS[0])
            codex_id = rollout.stem[-36:]
            codex.run("resume", codex_id, PROMPTS[1])
            requests = main_requests(codex.server.requests, "/responses")
        _write(out / "codex" / rollout.name, rollout.read_text(encoding="utf-8"), root)
        body = json.dumps(trimmed(requests[-1]), ensure_ascii=False, indent=1)
        _write(out / "codex" / "request.json", body, root)


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else DATA)

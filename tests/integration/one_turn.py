"""One user prompt answered by a long agentic turn, written by the real Claude Code and Codex
CLIs against the project's model server: the scenario of the compaction-by-round tests, and the
generator of ``tests/data/one_turn`` (``python tests/integration/one_turn.py``, see its
PROVENANCE.md).

The model server is scripted to read the project's files one per model response (one tool call
per round), then to answer in text. Each file holds its own marker line (``marker-round-NN``) and
body lines no other file holds, 845 (file01) to 5,532 (file12) tokens.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from agents import ClaudeProject, claude_bin, codex_home
from model_server import ModelServer

PROMPT = (
    "Read the files file01.txt, file02.txt and so on in this directory, one at a time, and "
    "tell me every marker line you find."
)
FINAL = "I read every file; each one holds exactly one marker line, marker-round-NN for file NN."


def file_name(number: int) -> str:
    return f"file{number:02d}.txt"


def body_line(number: int, line: int) -> str:
    """A line only file ``number`` holds."""
    digest = hashlib.sha256(f"{number}:{line}".encode()).hexdigest()
    return f"file{number:02d} line {line:03d}: checksum {digest[:16]} weight {(number * line) % 97}"


def assert_summarised_away(sent: str, older_calls: list[str], rounds: int) -> None:
    """Nothing of the summarised rounds' results is in the request ``sent`` (their call ids,
    the body of the files 1..rounds-1 they read), and the last tool round's file is."""
    for call in older_calls:
        assert call not in sent
    for number in range(1, rounds):
        assert body_line(number, 10) not in sent, file_name(number)
    assert body_line(rounds, 10) in sent


def project_files(rounds: int) -> dict[str, str]:
    """``fileNN.txt`` for each tool round: its marker, then 20 + 20*NN body lines."""
    files = {}
    for number in range(1, rounds + 1):
        lines = [f"marker-round-{number:02d}"]
        lines += [body_line(number, line) for line in range(1, 21 + 20 * number)]
        files[file_name(number)] = "\n".join(lines) + "\n"
    return files


def claude_script(rounds: int, cwd: Path) -> list[dict[str, Any]]:
    """Bash ``cat`` of each file (every fourth one with Read instead; every third response says
    what it does first), then the final answer."""
    script: list[dict[str, Any]] = []
    for number in range(1, rounds + 1):
        name = file_name(number)
        reply: dict[str, Any]
        if number % 4 == 0:
            reply = {"call": "Read", "input": {"file_path": str(cwd / name)}}
        else:
            reply = {"call": "Bash", "input": {"command": f"cat {name}", "description": name}}
        if number % 3 == 0:
            reply["text"] = f"Next, {name}."
        script.append(reply)
    return [*script, {"text": FINAL}]


def codex_replies(rounds: int) -> list[dict[str, Any]]:
    """``exec_command`` ``cat`` of each file, then the final answer."""
    calls: list[dict[str, Any]] = [
        {"call": "exec_command", "arguments": json.dumps({"cmd": f"cat {file_name(number)}"})}
        for number in range(1, rounds + 1)
    ]
    return [*calls, {"text": FINAL}]


def claude_one_turn(root: Path, rounds: int) -> ClaudeProject:
    """The real Claude Code answers ``PROMPT`` in ``root/project``; its session file."""
    claude = claude_bin()
    home, cwd = root / "home", root / "project"
    cwd.mkdir(parents=True)
    for name, text in project_files(rounds).items():
        (cwd / name).write_text(text, encoding="utf-8")
    project = ClaudeProject(home, cwd, cwd)  # the session is known once the CLI wrote it
    with ModelServer(messages=claude_script(rounds, cwd)) as server:
        done = subprocess.run(
            [str(claude), "-p", PROMPT, "--output-format", "stream-json", "--verbose",
             "--dangerously-skip-permissions"],
            cwd=cwd, env=project.env(server.port),
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    sessions = sorted((home / ".claude" / "projects").glob("*/*.jsonl"))
    assert len(sessions) == 1, sessions
    project.session = sessions[0]
    return project


def claude_rounds(session: Path) -> list[tuple[str, list[str]]]:
    """The session's model responses in order: (message id, the tool_use ids it called), read
    from the raw file (assistant lines sharing one ``message.id`` are one response)."""
    rounds: dict[str, list[str]] = {}
    for line in session.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("type") != "assistant" or record.get("isSidechain"):
            continue
        message = record["message"]
        calls = rounds.setdefault(message["id"], [])
        calls += [b["id"] for b in message.get("content") or [] if b.get("type") == "tool_use"]
    return list(rounds.items())


def claude_results(session: Path) -> dict[str, Any]:
    """Each tool_use id's tool_result content, as the raw file holds it."""
    results = {}
    for line in session.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        content = (record.get("message") or {}).get("content")
        if record.get("type") == "user" and isinstance(content, list):
            for block in content:
                if block.get("type") == "tool_result":
                    results[block["tool_use_id"]] = block["content"]
    return results


def codex_rounds(rollout: Path) -> list[list[str]]:
    """The rollout's model responses in order, each as the call ids it made: consecutive
    assistant-side ``response_item``s (message, reasoning, function_call) are one response."""
    rounds: list[list[str]] = []
    assistant_side = False
    for line in rollout.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("type") != "response_item":
            continue
        item = record["payload"]
        kind = item.get("type")
        is_model = kind in ("reasoning", "function_call", "custom_tool_call") or (
            kind == "message" and item.get("role") == "assistant"
        )
        if is_model and not assistant_side:
            rounds.append([])
        if kind in ("function_call", "custom_tool_call"):
            rounds[-1].append(item["call_id"])
        assistant_side = is_model
    return rounds


def codex_results(rollout: Path) -> dict[str, str]:
    """Each call id's output, as the rollout holds it."""
    results = {}
    for line in rollout.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        item = record.get("payload") or {}
        if record.get("type") == "response_item" and item.get("type", "").endswith("call_output"):
            output = item["output"]
            results[item["call_id"]] = output if isinstance(output, str) else json.dumps(output)
    return results


def _rewrite_paths(text: str, root: Path) -> str:
    """The scratch dir's paths as ``/home/dev`` (HOME) and ``/home/dev/project`` (the project),
    also in Claude Code's encoded project-dir form."""
    for old, new in ((root / "home", "/home/dev"), (root / "project", "/home/dev/project")):
        text = text.replace(str(old), new)
        encoded = re.sub(r"[^a-zA-Z0-9]", "-", str(old))
        text = text.replace(encoded, re.sub(r"[^a-zA-Z0-9]", "-", new))
    return text


def _copy_rewritten(source: Path, target: Path, root: Path) -> None:
    text = _rewrite_paths(source.read_text(encoding="utf-8"), root)
    assert str(root) not in text, f"a scratch path is left in {source}"
    for line in text.splitlines():
        json.loads(line)  # still one JSON record a line
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def generate(out: Path, rounds: int = 12) -> list[Path]:
    """Write a Claude Code and a Codex one-turn session into ``out``; their paths."""
    written = []
    with tempfile.TemporaryDirectory(prefix="ot-") as scratch:
        root = Path(scratch) / "claude"
        session = claude_one_turn(root, rounds).session
        target = out / "claude-code" / session.name
        _copy_rewritten(session, target, root)
        written.append(target)
        root = Path(scratch) / "codex"
        root.mkdir()
        with codex_home(root, codex_replies(rounds), project_files(rounds)) as codex:
            rollout = codex.first_session(PROMPT)
        target = out / "codex" / rollout.name
        _copy_rewritten(rollout, target, root)
        written.append(target)
    return written


if __name__ == "__main__":
    destination = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("tests/data/one_turn")
    for path in generate(destination):
        print(path)

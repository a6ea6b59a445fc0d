"""The real Codex CLI resumes a fork written by ``ctxtop edit``, against the project's own model
server (Responses API); the request it sends holds the placeholder, not the cleared output.

Codex writes the session itself first (it runs ``cat big.txt`` because the server asks it to).
The CLI (pinned) is installed with npm into a cache dir on first use; the test is skipped, saying
why, only when it cannot be installed.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

from agent_install import npm_cli
from model_server import ModelServer

from engine.editing.fork import edit_session
from engine.editing.policy import Policy

CODEX_VERSION = "0.169.0"
MARKER = "zebra-{}-unique-line-of-big-txt"
CONFIG = """model = "gpt-5"
model_provider = "local"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.local]
name = "ctxtop test model server"
base_url = "http://127.0.0.1:{port}/v1"
env_key = "CTXTOP_TEST_OPENAI_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
"""


def _codex_bin() -> Path:
    return npm_cli("@openai/codex", CODEX_VERSION, "codex")


def _run(codex: Path, args: list[str], cwd: Path, env: dict[str, str]) -> None:
    done = subprocess.run(
        [str(codex), "exec", "--skip-git-repo-check", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-2000:]


def test_codex_resumes_the_fork_with_placeholders(tmp_path: Path) -> None:
    codex = _codex_bin()
    home = tmp_path / "home"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    cwd = tmp_path / "project"
    cwd.mkdir()
    (cwd / "big.txt").write_text(
        "\n".join(MARKER.format(i) for i in range(300)) + "\n", encoding="utf-8"
    )
    replies = [
        {"call": "exec_command", "arguments": json.dumps({"cmd": "cat big.txt"})},
        {"text": "I read big.txt."},
        {"text": "Next question."},
    ]
    with ModelServer(replies) as server:
        (codex_home / "config.toml").write_text(CONFIG.format(port=server.port), encoding="utf-8")
        env = {
            "HOME": str(home),
            "CODEX_HOME": str(codex_home),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "CTXTOP_TEST_OPENAI_KEY": "dummy-key-for-the-test-server",
        }
        _run(codex, ["show me big.txt"], cwd, env)
        rollouts = sorted((codex_home / "sessions").rglob("rollout-*.jsonl"))
        assert len(rollouts) == 1, rollouts
        source = rollouts[0]
        assert MARKER.format(299) in source.read_text(encoding="utf-8")
        original = hashlib.sha256(source.read_bytes()).hexdigest()
        outcome = edit_session(source, Policy(keep_cycles=0))
        assert outcome["changed"] and outcome["resume_command"].startswith("codex resume ")
        seen = len(server.requests)
        _run(codex, ["resume", outcome["session_id"], "what was in it?"], cwd, env)
        requests = server.requests[seen:]
    asked = [r["body"] for r in requests if r["path"].split("?")[0].endswith("/responses")]
    assert asked, f"no request reached the server; saw {[r['path'] for r in requests]}"
    sent = json.dumps(asked[-1].get("input"), ensure_ascii=False)
    assert "what was in it?" in sent
    assert "[ctxtop: old tool result cleared" in sent
    assert MARKER.format(150) not in sent
    fork = Path(outcome["fork"])
    assert "what was in it?" in fork.read_text(encoding="utf-8")
    assert hashlib.sha256(source.read_bytes()).hexdigest() == original

"""The real Claude Code CLI resumes a fork written by ``ctxtop edit``, against the project's own
model server; the request it sends holds the placeholders, not the cleared text.

The CLI (pinned) is installed with npm into a cache dir on first use; the test is skipped only
when npm or the package cannot be installed, and says why.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from agent_install import npm_cli
from model_server import ModelServer

from engine.editing.fork import edit_session
from engine.editing.policy import Policy

CLAUDE_CODE_VERSION = "2.1.197"
ROOT = Path(__file__).resolve().parents[2]
SAMPLE = (
    ROOT / "tests/sessions/data/generated/claude-code/calc-main/"
    "e6da809c-ea6a-48e8-8ca6-02bf23adae92.jsonl"
)
CLEARED_LINE = "a78de21 Handle division by zero in div() and the CLI"


def _claude_bin() -> Path:
    return npm_cli("@anthropic-ai/claude-code", CLAUDE_CODE_VERSION, "claude")


def test_claude_code_resumes_the_fork_with_placeholders(tmp_path: Path) -> None:
    claude = _claude_bin()
    home = tmp_path / "home"
    cwd = tmp_path / "project"
    cwd.mkdir(parents=True)
    project_dir = home / ".claude" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", str(cwd))
    project_dir.mkdir(parents=True)
    source = project_dir / SAMPLE.name
    shutil.copyfile(SAMPLE, source)
    assert CLEARED_LINE in source.read_text(encoding="utf-8")
    original = hashlib.sha256(source.read_bytes()).hexdigest()
    outcome = edit_session(source, Policy(keep_cycles=0))
    assert outcome["changed"], "the sample has a result to clear"
    session_id = outcome["session_id"]
    with ModelServer() as server:
        env = {
            "HOME": str(home),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.port}",
            "ANTHROPIC_API_KEY": "dummy-key-for-the-test-server",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "IS_SANDBOX": "1",
        }
        done = subprocess.run(
            [
                str(claude),
                "-p",
                "What did git log show?",
                "--resume",
                session_id,
                "--output-format",
                "stream-json",
                "--verbose",
                "--dangerously-skip-permissions",
            ],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        requests = server.requests
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    asked = [
        r["body"]
        for r in requests
        if r["path"].split("?")[0].endswith("/v1/messages")
        and "What did git log show?" in json.dumps(r["body"])
    ]
    assert asked, f"no request carried the prompt; saw {[r['path'] for r in requests]}"
    # The main request carries the whole history (a side request, e.g. a title, may not).
    main_request = max(asked, key=lambda body: len(body.get("messages") or []))
    sent = json.dumps(main_request["messages"], ensure_ascii=False)
    assert "[ctxtop: old tool result cleared" in sent
    assert CLEARED_LINE not in sent
    # The agent appended its new turn to the fork; the original was never touched.
    fork = Path(outcome["fork"])
    assert "What did git log show?" in fork.read_text(encoding="utf-8")
    assert hashlib.sha256(source.read_bytes()).hexdigest() == original
    version = subprocess.run(
        [str(claude), "--version"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert version.stdout.startswith(CLAUDE_CODE_VERSION)

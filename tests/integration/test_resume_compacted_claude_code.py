"""The real Claude Code CLI resumes a session written by ``ctxtop compact``, against the
project's own model server; the request it sends starts from the summary, not from the history
the compaction dropped, and carries the kept round after it.

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
from typing import Any

from agent_install import npm_cli
from model_server import ModelServer

from engine.compaction.compact import compact_session
from engine.compaction.handoff import OPENING

CLAUDE_CODE_VERSION = "2.1.197"
ROOT = Path(__file__).resolve().parents[2]
SAMPLE = (
    ROOT / "tests/sessions/data/generated/claude-code/calc-main/"
    "e6da809c-ea6a-48e8-8ca6-02bf23adae92.jsonl"
)
KEPT_REQUEST = "What have we changed so far? Keep it short."
# Only in the dropped history: a re-attached file's body, and the agent's own earlier summary's
# closing instruction (the new summary carries that summary's content, not its boilerplate).
DROPPED = ('OPS = {"+": add, "-": sub, "*": mul, "/": div}', "do not acknowledge the summary")
PROMPT = "Summarise what we did in one line."


def _text(message: dict[str, Any]) -> str:
    return json.dumps(message.get("content"), ensure_ascii=False)


def test_claude_code_resumes_the_compacted_session_from_the_summary(tmp_path: Path) -> None:
    claude = npm_cli("@anthropic-ai/claude-code", CLAUDE_CODE_VERSION, "claude")
    home = tmp_path / "home"
    cwd = tmp_path / "project"
    cwd.mkdir(parents=True)
    project_dir = home / ".claude" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", str(cwd))
    project_dir.mkdir(parents=True)
    source = project_dir / SAMPLE.name
    shutil.copyfile(SAMPLE, source)
    original = source.read_text(encoding="utf-8")
    assert all(json.dumps(text)[1:-1] in original for text in DROPPED)
    outcome = compact_session(source, keep_rounds=1)
    assert outcome["summarizer"] == "structured" and outcome["kept_rounds"] == 1
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
            [str(claude), "-p", PROMPT, "--resume", outcome["session_id"],
             "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"],
            cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        requests = server.requests
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    asked = [
        r["body"]
        for r in requests
        if r["path"].split("?")[0].endswith("/v1/messages") and PROMPT in json.dumps(r["body"])
    ]
    assert asked, f"no request carried the prompt; saw {[r['path'] for r in requests]}"
    main_request = max(asked, key=lambda body: len(body.get("messages") or []))
    messages = main_request["messages"]
    # Claude Code merges consecutive user lines into one message (its own context, the summary,
    # the kept request): the order inside the conversation is what counts.
    sent = json.dumps(messages, ensure_ascii=False)
    assert OPENING in _text(messages[0])
    assert sent.index(OPENING) < sent.index(KEPT_REQUEST) < sent.index(PROMPT)
    assert sent.count("Full transcript of the conversation before this summary") == 1
    for dropped in DROPPED:
        assert dropped not in sent
    # The agent appended its new turn to the compacted session; the original is untouched.
    assert PROMPT in Path(outcome["fork"]).read_text(encoding="utf-8")
    assert hashlib.sha256(source.read_bytes()).hexdigest() == outcome["source_sha256"]
    assert source.read_text(encoding="utf-8") == original

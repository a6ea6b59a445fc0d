"""The real Codex CLI resumes a session written by ``ctxtop compact``, against the project's own
model server (Responses API): the request it sends is the standing context, the summary and the
new prompt, not the dropped history (the big command output).

Codex writes the session itself first (it runs ``cat big.txt`` because the server asks it to).
The CLI (pinned) is installed with npm into a cache dir on first use; the test is skipped, saying
why, only when it cannot be installed.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from model_server import ModelServer
from test_resume_codex import CONFIG, MARKER, _codex_bin, _run

from engine.compaction.compact import compact_session
from engine.compaction.handoff import OPENING


def test_codex_resumes_the_compacted_session_from_the_summary(tmp_path: Path) -> None:
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
        [source] = sorted((codex_home / "sessions").rglob("rollout-*.jsonl"))
        assert MARKER.format(150) in source.read_text(encoding="utf-8")
        original = hashlib.sha256(source.read_bytes()).hexdigest()
        outcome = compact_session(source, keep_rounds=0)
        assert outcome["summarised_rounds"] == 1 and outcome["resume_command"]
        assert "show me big.txt" in outcome["summary"]
        seen = len(server.requests)
        _run(codex, ["resume", outcome["session_id"], "what was in it?"], cwd, env)
        requests = server.requests[seen:]
    asked = [r["body"] for r in requests if r["path"].split("?")[0].endswith("/responses")]
    assert asked, f"no request reached the server; saw {[r['path'] for r in requests]}"
    sent = json.dumps(asked[-1].get("input"), ensure_ascii=False)
    assert OPENING in sent and "what was in it?" in sent
    assert sent.index(OPENING) < sent.index("what was in it?")
    assert MARKER.format(150) not in sent  # the command's output was summarised away
    assert sent.count("Full transcript of the conversation before this summary") == 1
    assert "what was in it?" in Path(outcome["fork"]).read_text(encoding="utf-8")
    assert hashlib.sha256(source.read_bytes()).hexdigest() == original

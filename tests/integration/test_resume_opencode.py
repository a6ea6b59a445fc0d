"""The real OpenCode CLI (1.18.33) imports and resumes the forks ``ctxtop edit`` and ``ctxtop
compact`` make of a session it wrote itself: OpenCode reads a file in the project, ctxtop clears
that result (or summarises that round) into an export file of its own (OpenCode's database is
only read), ``opencode import`` takes it and ``opencode run --session <fork id>`` sends the
placeholder (the summary), not the cleared text; the original session is left as it was; the
imported fork reads with ctxtop's estimate until the resumed request, then with the API's.

The CLI (pinned) is installed with npm into a cache dir on first use; the test is skipped, saying
why, only when it cannot be installed.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents import assert_fork_estimated, assert_undo_removes_the_resumed_fork
from model_server import ModelServer
from test_opencode_live import environment, opencode_project

from ctxtop.engine.agents.opencode import place
from ctxtop.engine.agents.opencode.rows import address
from ctxtop.engine.agents.session_reader import read_session
from ctxtop.engine.compaction.handoff import OPENING
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks.compact import compact_session
from ctxtop.engine.forks.edit import edit_session
from ctxtop.engine.forks.transaction import read_session_bytes
from ctxtop.engine.sessions.fork_mark import FORK_KEY
from ctxtop.engine.sessions.sample import context_tokens

BIG_LINE = "zebra-{}-unique-line-of-big-txt"
CLEARED = BIG_LINE.format(17)
SCRIPT = [{"call": "read", "input": {"filePath": "big.txt"}}, {"text": "I read big.txt."}]
PROMPT = "what did big.txt hold?"


def _opencode(opencode: Path, cwd: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [str(opencode), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    return done.stdout


def _point_at(home: Path, port: int) -> None:
    """OpenCode's provider at another model server."""
    config = home / ".config" / "opencode" / "opencode.json"
    settings = json.loads(config.read_text())
    settings["provider"]["local"]["options"]["baseURL"] = f"http://127.0.0.1:{port}/v1"
    config.write_text(json.dumps(settings))


@dataclass
class OpenCodeHome:
    """A HOME and project where the real OpenCode read big.txt in a session of its own."""

    opencode: Path
    home: Path
    repo: Path
    env: dict[str, str]
    database: Path
    source: Path  # that session, in OpenCode's database

    @classmethod
    def with_a_session(cls, root: Path) -> OpenCodeHome:
        opencode, home, repo, tools = opencode_project(root)
        (repo / "big.txt").write_text("\n".join(BIG_LINE.format(i) for i in range(300)) + "\n")
        database = home / ".local/share/opencode/opencode.db"
        with ModelServer(messages=SCRIPT) as server:
            env = environment(home, server.port, tools)
            _opencode(opencode, repo, env, "run", "--pure", "--auto", "--format", "json", "Read.")
        [source_id] = place.session_ids(database)
        return cls(opencode, home, repo, env, database, address(database, source_id))

    def import_and_resume(self, outcome: dict[str, Any]) -> str:
        """``opencode import`` the fork, check the imported session reads with ctxtop's estimate,
        then ``opencode run --session`` it with ``PROMPT``: the request that carried it."""
        fork, fork_id = Path(outcome["fork"]), outcome["session_id"]
        assert fork_id.startswith("ses_") and fork.name == f"{fork_id}.json"
        assert outcome["resume_command"] == (
            f"cd {shlex.quote(str(self.repo))} && opencode import {shlex.quote(str(fork))}"
            f" && opencode --session {fork_id}"
        )
        assert_fork_estimated(outcome)
        with ModelServer() as server:
            _point_at(self.home, server.port)
            imported = _opencode(self.opencode, self.repo, self.env, "import", str(fork))
            assert f"Imported session: {fork_id}" in imported
            # Imported, not yet resumed: its context is ctxtop's estimate (the mark came along).
            context = context_tokens(read_session(address(self.database, fork_id)))
            assert (context.value, context.source) == (outcome["context_after"], "estimated")
            _opencode(self.opencode, self.repo, self.env, "run", "--pure", "--format", "json",
                      "--session", fork_id, PROMPT)  # fmt: skip
            requests = server.requests
        sent = [json.dumps(r["body"]) for r in requests if PROMPT in json.dumps(r["body"])]
        assert sent, f"no request carried the prompt; saw {[r['path'] for r in requests]}"
        assert FORK_KEY not in sent[-1]  # ctxtop's mark is not sent to the model
        # The imported fork is a session of OpenCode's own now; its new request is the API's.
        resumed = read_session(address(self.database, fork_id))
        assert resumed.last_response is not None and context_tokens(resumed).source == "reported"
        assert resumed.last_response.usage.input_tokens_total < outcome["context_before"]
        return sent[-1]


def test_opencode_imports_and_resumes_the_edit_fork_with_placeholders(tmp_path: Path) -> None:
    opencode = OpenCodeHome.with_a_session(tmp_path)
    rows_before = read_session_bytes(opencode.source)
    outcome = edit_session(opencode.source, Policy(keep_turns=0)).as_json()
    assert CLEARED.encode() in rows_before
    assert [change["tool"] for change in outcome["changed"]] == ["read"]
    context = read_session(Path(outcome["fork"])).context
    results = [b.text for m in context for b in m.blocks if b.kind == "tool_result"]
    assert results[-1].startswith("[ctxtop: old tool result cleared")

    sent = opencode.import_and_resume(outcome)
    assert "[ctxtop: old tool result cleared" in sent and CLEARED not in sent
    assert read_session_bytes(opencode.source) == rows_before  # the session the fork came from
    assert_undo_removes_the_resumed_fork(outcome)


def test_opencode_imports_and_resumes_the_compacted_fork_from_the_summary(
    tmp_path: Path,
) -> None:
    opencode = OpenCodeHome.with_a_session(tmp_path)
    rows_before = read_session_bytes(opencode.source)
    outcome = compact_session(opencode.source, keep_rounds=1).as_json()
    assert outcome["summarised_rounds"] == 1  # the round that read big.txt
    sent = opencode.import_and_resume(outcome)
    assert OPENING in sent and CLEARED not in sent and "I read big.txt." in sent
    assert read_session_bytes(opencode.source) == rows_before
    assert_undo_removes_the_resumed_fork(outcome)

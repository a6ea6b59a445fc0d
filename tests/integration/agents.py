"""Running the real agent CLIs for the resume tests: where their sessions go, how they are
started against the project's model server, and which request carried the new prompt.

The CLIs (pinned) are installed with npm into a cache dir on first use (``agent_install``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_install import npm_cli
from model_server import ModelServer

from ctxtop.engine.agents import names_fork
from ctxtop.engine.agents.session_reader import read_session
from ctxtop.engine.compaction.handoff import OPENING
from ctxtop.engine.editing.undo import undo
from ctxtop.engine.forks.compact import compact_session
from ctxtop.engine.forks.restore import restore_session
from ctxtop.engine.sessions.fork_mark import marked_fork
from ctxtop.engine.sessions.sample import context_tokens

CLAUDE_CODE_VERSION = "2.1.332"
CODEX_VERSION = "0.171.0"
ROOT = Path(__file__).resolve().parents[2]
CLAUDE_SAMPLE = (
    ROOT / "tests/sessions/data/generated/claude-code/calc-main/"
    "e6da809c-ea6a-48e8-8ca6-02bf23adae92.jsonl"
)
# The same scenario written by Claude Code 2.1.332 (prompt_snapshot attachments, api-request*,
# cost-state records; /compact, then a prompt whose Bash call shows git log).
CLAUDE_SAMPLE_2_1_332 = (
    ROOT / "sample_sessions/claude-code/projects/-home-dev-projects-calc-main/"
    "ff656323-5d3c-47d4-a01f-e8bc70c19faf.jsonl"
)
# Each sample session by the release that wrote it.
CLAUDE_SAMPLES = {"2.1.197": CLAUDE_SAMPLE, "2.1.332": CLAUDE_SAMPLE_2_1_332}
# Codex writes its session itself first: the server asks it to run ``cat big.txt``.
BIG_LINE = "zebra-{}-unique-line-of-big-txt"
CODEX_REPLIES = [
    {"call": "exec_command", "arguments": json.dumps({"cmd": "cat big.txt"})},
    {"text": "I read big.txt."},
    {"text": "Next question."},
]
CODEX_CONFIG = """model = "gpt-5"
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


def claude_bin() -> Path:
    return npm_cli("@anthropic-ai/claude-code", CLAUDE_CODE_VERSION, "claude")


def codex_bin() -> Path:
    return npm_cli("@openai/codex", CODEX_VERSION, "codex")


@dataclass
class ClaudeProject:
    """A HOME with the sample session in the project dir Claude Code derives from ``cwd``."""

    home: Path
    cwd: Path
    session: Path

    @classmethod
    def make(cls, root: Path, sample: Path = CLAUDE_SAMPLE) -> ClaudeProject:
        home, cwd = root / "home", root / "project"
        cwd.mkdir(parents=True)
        project_dir = home / ".claude" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", str(cwd))
        project_dir.mkdir(parents=True)
        session = project_dir / sample.name
        shutil.copyfile(sample, session)
        return cls(home, cwd, session)

    def env(self, port: int) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
            "ANTHROPIC_API_KEY": "dummy-key-for-the-test-server",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "IS_SANDBOX": "1",
        }

    def resume(self, claude: Path, session_id: str, prompt: str) -> list[dict[str, Any]]:
        """Run ``claude -p PROMPT --resume ID``; the requests the model server saw."""
        with ModelServer() as server:
            done = subprocess.run(
                [str(claude), "-p", prompt, "--resume", session_id,
                 "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"],
                cwd=self.cwd, env=self.env(server.port),
                capture_output=True, text=True, timeout=120, check=False,
            )  # fmt: skip
            requests = server.requests
        assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
        return requests


def claude_main_request(requests: list[dict[str, Any]], prompt: str) -> dict[str, Any]:
    """The Messages request that carried ``prompt`` with the whole history (a side request,
    e.g. a title, may carry it too, with less)."""
    asked = [
        r["body"]
        for r in requests
        if r["path"].split("?")[0].endswith("/v1/messages") and prompt in json.dumps(r["body"])
    ]
    assert asked, f"no request carried the prompt; saw {[r['path'] for r in requests]}"
    return max(asked, key=lambda body: len(body.get("messages") or []))


@dataclass
class CodexHome:
    """A HOME whose Codex talks to ``server`` and a project holding ``big.txt``."""

    codex: Path
    home: Path
    cwd: Path
    server: ModelServer

    @property
    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "CODEX_HOME": str(self.home / ".codex"),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "CTXTOP_TEST_OPENAI_KEY": "dummy-key-for-the-test-server",
        }

    def run(self, *args: str) -> None:
        done = subprocess.run(
            [str(self.codex), "exec", "--skip-git-repo-check", *args],
            cwd=self.cwd, env=self.env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-2000:]

    def first_session(self, prompt: str = "show me big.txt") -> Path:
        """Codex's own rollout of ``prompt`` (the only session so far)."""
        self.run(prompt)
        rollouts = sorted((self.home / ".codex" / "sessions").rglob("rollout-*.jsonl"))
        assert len(rollouts) == 1, rollouts
        return rollouts[0]

    def copy(self, home: Path) -> CodexHome:
        """Another CODEX_HOME with this one's settings and sessions, for the same project. Not
        its state databases: they name the rollouts' paths here, and ``codex resume`` in the
        copy would append to this home's rollout."""
        sessions = self.home / ".codex" / "sessions"
        shutil.copytree(sessions, home / ".codex" / "sessions")
        shutil.copyfile(self.home / ".codex" / "config.toml", home / ".codex" / "config.toml")
        return CodexHome(self.codex, home, self.cwd, self.server)

    def resume_input(self, session_id: str, prompt: str) -> list[dict[str, Any]]:
        """The input items of the Responses request ``codex exec resume`` sent."""
        seen = len(self.server.requests)
        self.run("resume", session_id, prompt)
        requests = self.server.requests[seen:]
        asked = [r["body"] for r in requests if r["path"].split("?")[0].endswith("/responses")]
        assert asked, f"no request reached the server; saw {[r['path'] for r in requests]}"
        return list(asked[-1].get("input") or [])

    def resume(self, session_id: str, prompt: str) -> str:
        """The input of the Responses request ``codex exec resume`` sent, as JSON text."""
        return json.dumps(self.resume_input(session_id, prompt), ensure_ascii=False)


@contextmanager
def codex_home(
    root: Path,
    replies: list[dict[str, Any]] = CODEX_REPLIES,
    files: dict[str, str] | None = None,
) -> Iterator[CodexHome]:
    """``files`` (name: text) go into the project; by default ``big.txt``."""
    codex = codex_bin()
    home, cwd = root / "home", root / "project"
    (home / ".codex").mkdir(parents=True)
    cwd.mkdir()
    if files is None:
        files = {"big.txt": "\n".join(BIG_LINE.format(i) for i in range(300)) + "\n"}
    for name, text in files.items():
        (cwd / name).write_text(text, encoding="utf-8")
    with ModelServer(replies) as server:
        config = CODEX_CONFIG.format(port=server.port)
        (home / ".codex" / "config.toml").write_text(config, encoding="utf-8")
        yield CodexHome(codex, home, cwd, server)


def assert_fork_estimated(outcome: dict[str, Any]) -> None:
    """A fork ctxtop wrote opens with the figure its preview promised, marked estimated (the
    marks ctxtop leaves in it: engine/sessions/fork_mark.py), and carries the mark naming its
    session that ``ctxtop undo`` asks for."""
    context = context_tokens(read_session(Path(outcome["fork"])))
    assert (context.value, context.source) == (outcome["context_after"], "estimated")
    assert marked_fork(Path(outcome["fork"]).read_bytes()) == outcome["session_id"]


def assert_undo_removes_the_resumed_fork(outcome: dict[str, Any]) -> None:
    """The fork the real CLI resumed (and appended to) is still provably ctxtop's: its mark
    is in the part ctxtop wrote, and ``undo --force`` removes it."""
    assert undo(force=True, fork_named=names_fork)["removed"]
    assert not Path(outcome["fork"]).exists()


def assert_fork_reported(outcome: dict[str, Any]) -> None:
    """Once the real CLI resumed the fork (its marks in it) and made a request, the fork's
    context is the API's figure again."""
    context = context_tokens(read_session(Path(outcome["fork"])))
    assert context.source in ("reported", "calibrated") and context.reported


def assert_resumed_with_placeholders(
    requests: list[dict[str, Any]], prompt: str, cleared: str, outcome: dict[str, Any]
) -> None:
    """The real CLI resumed the fork: its request with ``prompt`` holds ctxtop's placeholder
    and not the ``cleared`` text, and the CLI wrote the prompt into the fork."""
    sent = [json.dumps(r["body"]) for r in requests if prompt in json.dumps(r["body"])]
    assert sent, f"no request carried the prompt; saw {[r['path'] for r in requests]}"
    assert "[ctxtop: old tool result cleared" in sent[-1]
    assert cleared not in sent[-1]
    assert prompt in Path(outcome["fork"]).read_text(encoding="utf-8")


def compacted_inside_a_turn(session: Path, dropped: str) -> dict[str, Any]:
    """``ctxtop compact`` keeping the last round of a turn that has more (its request kept
    too), summarising ``dropped`` away; the outcome, its fork checked estimated."""
    outcome = compact_session(session, keep_rounds=1).as_json()
    assert outcome["kept_rounds"] == 1 and outcome["kept_request"]
    assert dropped not in outcome["summary"]
    assert_fork_estimated(outcome)
    return outcome


def assert_resumed_from_summary(
    requests: list[dict[str, Any]], kept: tuple[str, ...], dropped: str, outcome: dict[str, Any]
) -> None:
    """The real CLI resumed a compacted fork: its request with the new prompt (``kept``'s last)
    holds ctxtop's summary once, then ``kept`` in order, and not the ``dropped`` text; the CLI
    wrote the prompt into the fork."""
    prompt = kept[-1]
    sent = [json.dumps(r["body"]) for r in requests if prompt in json.dumps(r["body"])]
    assert sent, f"no request carried the prompt; saw {[r['path'] for r in requests]}"
    order = [sent[-1].find(text) for text in (OPENING, *kept)]
    assert -1 not in order and order == sorted(order), order
    assert sent[-1].count(OPENING) == 1
    assert dropped not in sent[-1]
    assert prompt in Path(outcome["fork"]).read_text(encoding="utf-8")


def restored_requests(
    server: ModelServer,
    session: Path,
    number: int,
    item: str,
    prompt: str,
    resume: Callable[[str], subprocess.CompletedProcess[str]],
) -> tuple[str, str]:
    """The request (as JSON text) carrying ``prompt`` that the CLI sent on resuming each
    ``ctxtop restore`` fork of compaction ``number``: from just before it, and with ``item``
    re-added after its summary. ``resume(session_id)`` runs the CLI."""
    sent: list[str] = []
    for kind, wanted in (("before", ()), ("summary", (item,))):
        outcome = restore_session(session, number, wanted).as_json()
        assert outcome["restore"] == kind
        seen = len(server.requests)
        done = resume(outcome["session_id"])
        assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
        asked = [json.dumps(r["body"]) for r in server.requests[seen:]]
        sent.append(next(body for body in reversed(asked) if prompt in body))
    return sent[0], sent[1]

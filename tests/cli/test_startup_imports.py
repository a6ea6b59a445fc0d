"""Start-up cost: a command imports what it uses. ``ctxtop report`` (run every time a user looks
at a session) and ``ctxtop --version`` / the dashboard's launch do not load the UI toolkit, the
proxy's HTTP stack, the skeleton parsers or the editing and compaction engines. Each case is a
real ``ctxtop`` process on a sample session; it reports the modules it ended with."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxtop.engine.cli.main import COMMAND_NAMES, build_parser

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = (
    ROOT
    / "sample_sessions/claude-code/projects/-home-dev-demo-project"
    / "b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl"
)
CODEX = sorted((ROOT / "sample_sessions/codex").rglob("rollout-*.jsonl"))[0]  # 0.169's

# Runs tui.cli.main as the console script does, then writes the loaded modules to a file.
PROBE = """
import json, sys
from ctxtop.tui.cli import main
try:
    code = main(sys.argv[2:])
except SystemExit as stop:  # --version exits from argparse
    code = stop.code
with open(sys.argv[1], "w") as out:
    json.dump(sorted(sys.modules), out)
sys.exit(code)
"""

# Packages or modules a command may import only when it needs them.
HEAVY = {
    "textual": "the dashboard's UI toolkit",
    "tree_sitter": "skeletons (parsers of source code)",
    "tree_sitter_language_pack": "skeletons (grammars)",
    "aiohttp": "the proxy's HTTP server and client",
    "asyncio": "the proxy and live mode",
    "ctxtop.engine.proxy.server": "the proxy",
    "ctxtop.engine.editing": "ctxtop edit and undo",
    "ctxtop.engine.compaction": "ctxtop compact",
    "ctxtop.engine.forks": "ctxtop edit and compact",
    "ctxtop.engine.live.session": "the dashboard's session model",
    "ctxtop.tui.app": "the dashboard",
}


def loaded(
    tmp_path: Path, *args: str, stdin: str | None = None
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    where = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(where), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    return done, set(json.loads(where.read_text()))


def heavy_in(modules: set[str]) -> dict[str, str]:
    return {
        name: why
        for name, why in HEAVY.items()
        if any(module == name or module.startswith(name + ".") for module in modules)
    }


@pytest.mark.parametrize("session", [CLAUDE, CODEX], ids=["claude-code", "codex"])
@pytest.mark.parametrize("output", ["--json", "--breakdown"])
def test_report_does_not_import_what_it_does_not_use(
    tmp_path: Path, session: Path, output: str
) -> None:
    done, modules = loaded(tmp_path, "report", output, str(session))
    if output == "--json":
        report = json.loads(done.stdout)
        assert report["api_requests"] > 0 and report["analysis"]  # the work was really done
    else:
        assert "context by category" in done.stdout
    assert heavy_in(modules) == {}
    # Only the report's own command module, not every sub-command's.
    assert {m for m in modules if m.startswith("ctxtop.engine.cli.cmd_")} == {
        "ctxtop.engine.cli.cmd_report"
    }


def test_version_imports_no_command(tmp_path: Path) -> None:
    done, modules = loaded(tmp_path, "--version")
    assert done.stdout.startswith("ctxtop ")
    assert heavy_in(modules) == {}
    assert not {m for m in modules if m.startswith("ctxtop.engine.cli.cmd_")}


def test_statusline_imports_no_analysis_when_the_log_reports_the_context(tmp_path: Path) -> None:
    # Claude Code runs the status line after every message: it reads the log's figures only.
    status = {"transcript_path": str(CLAUDE), "model": {"id": "claude-sonnet-4-5"}}
    done, modules = loaded(tmp_path, "statusline", stdin=json.dumps(status))
    assert done.stdout.startswith("ctx ")
    assert heavy_in(modules) == {}
    assert not {m for m in modules if m.startswith("ctxtop.engine.analysis.")}


def test_help_still_lists_every_command(tmp_path: Path) -> None:
    done, modules = loaded(tmp_path, "--help")
    for name in COMMAND_NAMES:
        assert name in done.stdout
    # Listing the proxy command does not start its HTTP stack (nor the dashboard's toolkit).
    heavy = heavy_in(modules)
    for name in ("aiohttp", "asyncio", "ctxtop.engine.proxy.server", "textual", "ctxtop.tui.app"):
        assert name not in heavy


def test_command_names_are_the_parsers_the_modules_add() -> None:
    # The dashboard-or-command decision uses the names of COMMANDS without importing them.
    parser = build_parser()
    (subparsers,) = [a for a in parser._actions if a.dest == "command"]
    assert set(subparsers.choices) == COMMAND_NAMES  # type: ignore[attr-defined]


def test_agents_writers_and_sources_load_when_asked_for() -> None:
    from ctxtop.engine.agents import AGENTS
    from ctxtop.engine.compaction.source import Source
    from ctxtop.engine.editing.writer import Writer

    for agent in AGENTS.values():
        assert agent.can_edit == (agent.writer is not None)
        assert agent.can_compact == (agent.source is not None)
        assert agent.writer is None or issubclass(agent.writer, Writer)
        assert agent.source is None or issubclass(agent.source, Source)
    assert AGENTS["claude-code"].can_edit and AGENTS["claude-code"].can_compact

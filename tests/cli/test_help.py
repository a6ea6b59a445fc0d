"""What ``--help`` and the README tell a newcomer matches what the commands do."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest
import yaml

from ctxtop.engine.cli.main import COMMAND_NAMES, main
from ctxtop.engine.config import Settings
from ctxtop.tui.screens.budget import parse_tokens

ROOT = Path(__file__).resolve().parents[2]
DEMO = (
    ROOT / "sample_sessions/claude-code/projects/-home-dev-demo-project"
    "/b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl"
)


def output(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args), launch_dashboard=lambda _: 0)
        except SystemExit as leaving:  # --help
            code = int(leaving.code or 0)
    return code, out.getvalue(), err.getvalue()


def test_top_level_help_lists_the_dashboards_options_and_every_command() -> None:
    """It listed only -h and --version: nothing said how to run the demo or pick an agent."""
    code, out, _ = output("--help")
    assert code == 0
    for option in ("--agent AGENT", "--demo", "--proxy", "SESSION_FILE"):
        assert option in out
    for command in COMMAND_NAMES:
        assert re.search(rf"^\s+{command}\s", out, re.MULTILINE), command


@pytest.mark.parametrize("command", sorted(COMMAND_NAMES))
def test_command_help_is_plain_text(command: str) -> None:
    """Module docstrings were shown as they are: ``ctxtop undo``: with reST's code marks."""
    code, out, _ = output(command, "--help")
    assert code == 0 and out.startswith(f"usage: ctxtop {command} ")
    assert "``" not in out


def test_config_help_names_every_block_of_the_settings() -> None:
    _, out, _ = output("config", "--help")
    text = " ".join(out.split())
    for key in ("profile", "theme", "refresh", "active_minutes", "thresholds", "llm:", "proxy:"):
        assert key in text
    assert "live:" in text


def test_the_readmes_settings_show_the_defaults() -> None:
    """The README's llm.model read gpt-5-mini, as if that were the default; there is none."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("Settings live in `config.yaml`", 1)[1].split("```yaml\n", 1)[1]
    shown = yaml.safe_load(block.split("```", 1)[0])
    defaults = Settings()
    assert shown["llm"]["model"] == defaults.llm.model is None
    assert shown["active_minutes"] == defaults.active_minutes


@pytest.mark.parametrize("typed", ["64k", "64000", "64,000"])
def test_report_takes_a_budget_as_the_dashboard_does(typed: str) -> None:
    """``report --budget 64k`` was refused while the dashboard's ``b`` took 64k."""
    assert parse_tokens(typed) == 64_000
    code, out, err = output("report", str(DEMO), "--budget", typed, "--json")
    assert code == 0, err
    assert json.loads(out)["analysis"]["thresholds"]["window"] == 64_000


def test_compact_takes_its_budget_in_the_same_words() -> None:
    code, out, err = output(
        "compact", str(DEMO), "--keep-rounds", "1", "--dry-run", "--budget", "1.5k", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["budget"] == 1_500

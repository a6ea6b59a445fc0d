"""An agent is one folder: outside ``engine/agents/<agent>/`` (and the registry that lists the
folders) no code names an agent by its id or imports an agent's modules; it asks the registry."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ctxtop.engine.agents import AGENTS

ROOT = Path(__file__).resolve().parents[2]
AGENTS_DIR = ROOT / "engine" / "agents"
FOLDERS = sorted(path.name for path in AGENTS_DIR.iterdir() if (path / "plugin.py").is_file())


def _outside_the_folders() -> list[Path]:
    files = [*sorted((ROOT / "engine").rglob("*.py")), *sorted((ROOT / "tui").rglob("*.py"))]
    inside = [AGENTS_DIR / folder for folder in FOLDERS]
    registry = AGENTS_DIR / "__init__.py"
    return [f for f in files if f != registry and not any(f.is_relative_to(d) for d in inside)]


def naming_an_agent(source: str, ids: set[str], folders: set[str]) -> list[str]:
    """Where ``source`` names an agent: a string that is an agent's id, an import of an
    agent's modules (``engine.agents.<agent>``); as ``line: what``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and node.value in ids:
            found.append(f"{node.lineno}: {node.value!r}")
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            modules = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        for module in modules:
            parts = module.removeprefix("ctxtop.").split(".")
            if parts[:2] == ["engine", "agents"] and len(parts) > 2 and parts[2] in folders:
                found.append(f"{node.lineno}: import {module}")
    return found


def test_every_registered_agent_is_a_folder_with_its_plugin() -> None:
    assert len(FOLDERS) == len(AGENTS)
    for agent in AGENTS.values():
        folder = agent.reader.__module__.removeprefix("ctxtop.").split(".")[2]
        assert folder in FOLDERS, agent.name
        assert agent.name not in {other.name for other in AGENTS.values() if other is not agent}


def test_no_code_outside_the_agent_folders_names_an_agent() -> None:
    ids, folders = set(AGENTS), set(FOLDERS)
    files = _outside_the_folders()
    assert len(files) > 100  # engine/ and tui/ were read
    found = {
        str(path.relative_to(ROOT)): where
        for path in files
        if (where := naming_an_agent(path.read_text(encoding="utf-8"), ids, folders))
    }
    assert found == {}


@pytest.mark.parametrize(
    "line",
    [
        'agent = state.agent if state else "codex"',
        'if state.agent == "gemini-cli": pass',
        "from ctxtop.engine.agents.codex.writer import is_codex",
        "from ctxtop.engine.agents import claude_code",
        "import ctxtop.engine.agents.copilot_cli.reader",
    ],
)
def test_the_scan_sees_an_agent_named(line: str) -> None:
    assert naming_an_agent(line, set(AGENTS), set(FOLDERS))


def test_the_scan_lets_the_registry_be_asked() -> None:
    line = "from ctxtop.engine.agents import AGENTS, proxied\nplugin = AGENTS.get(state.agent)"
    assert naming_an_agent(line, set(AGENTS), set(FOLDERS)) == []

"""Types are the API between the engine and the dashboard: the TUI reads the engine's frozen
dataclasses (a fork's ``Outcome``, the ``Analysis``, ...) and never their ``--json`` form, which
only the CLI prints (the calls of every module under tui/, read from the source)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
JSON_FORMS = {"as_json", "to_json"}


def json_calls(top: str) -> list[str]:
    """``module:line method`` for each call of a JSON form under ``top``."""
    found: list[str] = []
    for path in sorted((ROOT / top).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in JSON_FORMS
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.func.attr}")
    return found


def test_the_tui_never_reads_the_json_form_of_the_engines_values() -> None:
    assert json_calls("tui") == []


def test_the_check_finds_a_json_call() -> None:
    """The scan above would see such a call: the CLI makes them."""
    assert any(call.startswith("engine/cli/cmd_edit.py") for call in json_calls("engine/cli"))

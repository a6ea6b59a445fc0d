"""ctxtop installs as one package, ``ctxtop``: the repository's folders are its subpackages, and
no module imports them under another name (where any other ``engine`` would collide)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("engine", "tui", "themes", "sample_sessions")
CODE_IMPORT = re.compile(r"(?:^|[;\n])\s*(?:from|import) ([\w.]+)")


def test_first_party_code_is_imported_only_as_ctxtop() -> None:
    stray = []
    for folder in (*FOLDERS, "tests", "bench"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = []
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = [node.module]
                elif isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    # Code run from a string (a child process's ``python -c``).
                    names = CODE_IMPORT.findall(node.value)
                stray += [
                    f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] in FOLDERS
                ]
    assert stray == []


@pytest.mark.slow
def test_the_wheel_holds_every_file_of_the_folders(tmp_path: Path) -> None:
    """``pip install .`` installs one ``ctxtop`` folder holding each folder's files (the data
    files too: profiles, themes, every sample), and ``python -m ctxtop``."""
    wheel_command = [sys.executable, "-m", "pip", "wheel", "--no-deps"]
    subprocess.run(
        [*wheel_command, "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("ctxtop-*.whl")
    names = {n for n in zipfile.ZipFile(wheel).namelist() if ".dist-info/" not in n}
    expected = {
        "ctxtop/" + path.relative_to(ROOT).as_posix()
        for folder in FOLDERS
        for path in (ROOT / folder).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.parts[-2] != "package"
    }
    assert names == expected | {"ctxtop/__init__.py", "ctxtop/__main__.py"}

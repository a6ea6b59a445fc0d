"""A docstring, comment or README line that names a file of this repository names one that
exists (modules move; their mentions must follow)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("engine", "tui", "themes", "tests", "bench", "sample_sessions")
MENTION = re.compile(rf"(?<![\w/.-])((?:{'|'.join(FOLDERS)})/[\w./-]*\w)")


def _prose(path: Path) -> list[tuple[int, str]]:
    """The comments and docstrings of a module, with their line numbers."""
    text = path.read_text(encoding="utf-8")
    found = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(text).readline)
        if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc and node.body:
                found.append((node.body[0].lineno, doc))
    return found


def _exists(mention: str) -> bool:
    """A path, or the stem of files (``random-words`` for its ``.cases.jsonl.gz``); ``NAME``
    stands for any name."""
    if "NAME" in mention or mention.endswith("_"):
        return True
    target = ROOT / mention.rstrip(".")
    return target.exists() or any(target.parent.glob(target.name + ".*"))


def test_every_file_named_in_prose_exists() -> None:
    missing = []
    sources = [p for folder in FOLDERS[:-1] for p in (ROOT / folder).rglob("*.py")]
    for path in sources:
        for line, prose in _prose(path):
            missing += [
                f"{path.relative_to(ROOT)}:{line}: {m}"
                for m in MENTION.findall(prose)
                if not _exists(m)
            ]
    for number, text in enumerate((ROOT / "README.md").read_text("utf-8").splitlines(), 1):
        missing += [f"README.md:{number}: {m}" for m in MENTION.findall(text) if not _exists(m)]
    assert missing == []

"""The `ctxtop report --json` of every sample and test session, kept as golden files.

The goldens were computed with the code before the cold-path speed work (issue 16); the test
asserts that every figure is still the same. Regenerate them only for a change that is meant to
change figures: ``python tests/perf/report_goldens.py`` (then review the diff).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden_reports"
# The context by category (--breakdown) of every session, in one file.
BREAKDOWNS = Path(__file__).resolve().parent / "golden_breakdowns.json"
SOURCES = (ROOT / "sample_sessions", ROOT / "tests" / "sessions" / "data")


def session_files() -> list[Path]:
    """Every session log under the sample and test folders (not the side files beside them)."""
    files = []
    for source in SOURCES:
        for path in sorted(source.rglob("*")):
            if path.suffix == ".jsonl" or (
                path.suffix == ".json" and "openai-messages" in path.parts
            ):
                files.append(path)
    return files


def golden_path(session: Path) -> Path:
    name = str(session.relative_to(ROOT)).replace(os.sep, "__")
    return GOLDEN / f"{name}.json"


def report_of(session: Path, *options: str) -> Any:
    """The parsed output of `ctxtop report --json` on the file (its path relative to the repo)."""
    from ctxtop.engine.cli.main import main

    out = io.StringIO()
    cwd = Path.cwd()
    try:
        os.chdir(ROOT)
        with contextlib.redirect_stdout(out):
            code = main(["report", str(session.relative_to(ROOT)), "--json", *options])
    finally:
        os.chdir(cwd)
    assert code == 0, session
    return json.loads(out.getvalue())


# The agents' settings a report honours (windows, auto-compact points): never the machine's.
AGENT_VARIABLES = (
    "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE",
    "CLAUDE_CODE_AUTO_COMPACT_WINDOW",
    "CLAUDE_CODE_MAX_CONTEXT_TOKENS",
    "CLAUDE_CODE_DISABLE_1M_CONTEXT",
    "DISABLE_AUTO_COMPACT",
    "DISABLE_COMPACT",
    "ENABLE_PROMPT_CACHING_1H",
    "FORCE_PROMPT_CACHING_5M",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "COPILOT_HOME",
    "PI_CODING_AGENT_DIR",
    "PI_CODING_AGENT_SESSION_DIR",
    "QWEN_HOME",
    "QWEN_RUNTIME_DIR",
)


def write_goldens() -> None:
    GOLDEN.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        for name in ("CONFIG", "CACHE", "DATA"):
            os.environ[f"CTXTOP_{name}_DIR"] = str(Path(home) / name.lower())
        os.environ["HOME"] = home
        os.environ["CLAUDE_CONFIG_DIR"] = str(Path(home) / ".claude")
        for name in AGENT_VARIABLES:
            os.environ.pop(name, None)
        for session in session_files():
            text = json.dumps(report_of(session), indent=1, ensure_ascii=False, sort_keys=True)
            golden_path(session).write_text(text + "\n", encoding="utf-8")
            print(golden_path(session).relative_to(ROOT))


def breakdowns() -> dict[str, Any]:
    """Each session's context by category (`ctxtop report --json --breakdown`), by file."""
    return {
        str(session.relative_to(ROOT)): report_of(session, "--breakdown")["context_breakdown"]
        for session in session_files()
    }


def write_breakdown_goldens() -> None:
    """BREAKDOWNS was written by 066eed6's code (the goldens' commit), with this file's
    ``breakdowns``: ``python tests/perf/report_goldens.py --breakdowns`` from a checkout of it."""
    with tempfile.TemporaryDirectory() as home:
        for name in ("CONFIG", "CACHE", "DATA"):
            os.environ[f"CTXTOP_{name}_DIR"] = str(Path(home) / name.lower())
        text = json.dumps(breakdowns(), indent=1, ensure_ascii=False, sort_keys=True)
    BREAKDOWNS.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    write_breakdown_goldens() if sys.argv[1:] == ["--breakdowns"] else write_goldens()

"""Text built to make a regular expression backtrack (long runs it can start matching at every
position): the commands that scan log text with patterns end. The subprocess timeout is the
hang check; each case took minutes or more before its pattern was made linear."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import Any

from cli_run import ROOT, assert_clean_end, run_subprocess

sys.path.insert(0, str(ROOT / "tests/editing"))
from test_edit_skeleton_mode import _Log  # the Claude Code log builder of the skeleton tests


def _write(log: Any, directory: Path) -> Path:
    path = directory / f"{log.session_id}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in log.records), encoding="utf-8")
    return path


def test_skeleton_of_a_source_file_with_a_long_blank_run(tmp_path: Path) -> None:
    """A TypeScript file whose first function is followed by 200 KB of blanks on its line."""
    source = "function f() { return 1 }" + " \t" * 100_000 + "let y = 2;\nfunction g() {}\n"
    numbered = "\n".join(f"{n:>6}→{line}" for n, line in enumerate(source.split("\n"), 1))
    log = _Log(str(uuid.uuid4()))
    log.add("user", "Read the code.")
    log.tool("toolu_1", "Read", {"file_path": "/w/src/a.ts"}, numbered)
    log.add("assistant", [{"type": "text", "text": "Read."}])
    log.add("user", "Now fix it.")
    log.add("assistant", [{"type": "text", "text": "Done."}])
    session = _write(log, tmp_path)
    ended = run_subprocess(
        "edit", str(session), "--mode", "skeleton", "--keep-cycles", "1", "--dry-run", timeout=120
    )
    assert_clean_end(ended, session)
    assert ended.code == 0


def test_compact_after_a_previous_summary_built_to_backtrack(tmp_path: Path) -> None:
    """The log's previous summary (any text a log gives) repeats "Full transcript" without a
    colon, 200,000 times: compact reads it for the earlier transcript's path."""
    log = _Log(str(uuid.uuid4()))
    log.add("user", "Full transcript" * 200_000, isCompactSummary=True)
    for n in range(3):
        log.add("user", f"request {n}")
        log.add("assistant", [{"type": "text", "text": f"answer {n}"}])
    session = _write(log, tmp_path)
    ended = run_subprocess("compact", str(session), "--keep-rounds", "1", "--dry-run", timeout=120)
    assert_clean_end(ended, session)
    assert ended.code == 0

"""``ctxtop edit`` on Codex rollouts, read with the Codex session reader: only the tool outputs
Codex still sends (those after the last compaction) are cleared, and the fork reads back as the
same Codex session under a new id."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
from pathlib import Path
from typing import Any

from ctxtop.engine.cli.main import main
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.forks.edit import edit_session

ROOT = Path(__file__).resolve().parents[2]
REAL = next((ROOT / "tests/sessions/data/real/codex").rglob("rollout-*.jsonl"))


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _copy(tmp_path: Path, lines: int | None = None) -> Path:
    day = tmp_path / "sessions" / "2026" / "11" / "22"
    day.mkdir(parents=True)
    target = day / REAL.name
    kept = REAL.read_bytes().splitlines(keepends=True)[:lines]
    target.write_bytes(b"".join(kept))
    return target


def _report(path: Path) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", str(path), "--json"]) == 0
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


def _big_call() -> str:
    """The call whose output is the 19.5k-token dump (before the compaction in the file)."""
    return next(
        str(payload["call_id"])
        for row in _rows(REAL)
        if row["type"] == "response_item"
        and isinstance(payload := row["payload"], dict)
        and payload.get("type") == "function_call_output"
        and "19500" in str(payload.get("output"))
    )


def test_outputs_before_the_compaction_are_not_cleared(tmp_path: Path) -> None:
    source = _copy(tmp_path)
    got = edit_session(source, Policy(keep_turns=0), dry_run=True).as_json()
    assert got["agent"] == "codex"
    # After the compaction Codex sends the replacement history, which holds no tool output.
    assert got["tool_uses"] == 0 and got["changed"] == []


def test_before_the_compaction_the_big_output_is_cleared_in_a_fork(tmp_path: Path) -> None:
    rows = _rows(REAL)
    compacted = next(i for i, row in enumerate(rows, 1) if row["type"] == "compacted")
    source = _copy(tmp_path, compacted - 1)
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["edit", str(source), "--keep-cycles", "0", "--json"]) == 0
    got = json.loads(out.getvalue())
    assert _big_call() in [change["tool_call_id"] for change in got["changed"]]
    assert got["resume_command"] == f"codex resume {got['session_id']}"
    fork = Path(got["fork"])
    assert fork.parent == source.parent and fork.name.endswith(f"-{got['session_id']}.jsonl")
    assert hashlib.sha256(source.read_bytes()).hexdigest() == digest
    forked = _report(fork)
    assert forked["agent"] == "codex" and forked["session_id"] == got["session_id"]
    cleared = sum(c["tokens_before"] - c["tokens_after"] for c in got["changed"])
    assert cleared > 4000  # Codex's truncated dump (about 4.8k tokens) is among them
    assert got["tokens_before"] - got["tokens_after"] == cleared
    before = {t["name"]: t["result_tokens"] for t in _report(source)["tools"]}
    after = {t["name"]: t["result_tokens"] for t in forked["tools"]}
    assert before["exec_command"] - after["exec_command"] == cleared

"""``ctxtop edit --mode skeleton`` on a Claude Code session whose agent read real-size source
files: reads become numbered outlines, the rest placeholders, and the fork reads back whole."""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

from ctxtop.engine.agents.session_reader import SessionReader, read_all, read_session
from ctxtop.engine.analysis.profiles import load_profile
from ctxtop.engine.analysis.prompt_outline import prompt_outline
from ctxtop.engine.analysis.report import analyze_session
from ctxtop.engine.cli.main import main
from ctxtop.engine.editing.placeholder import MARK, cleared_by_ctxtop
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.editing.truncate import truncate
from ctxtop.engine.forks.edit import edit_session
from ctxtop.engine.tokens.encoding import get_encoding

SOURCES = Path(__file__).parent / "skeleton_sources"
PROJECT = "/home/dev/shop"
READS = ["inventory.py", "event_store.ts", "lru_cache.rs", "orders_handler.go"]


def _numbered(text: str) -> str:
    """A file as Claude Code's Read returns it: ``{n:>6}→line``, then its reminder."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    body = "\n".join(f"{n:>6}→{line}" for n, line in enumerate(lines, 1))
    return (
        body + "\n\n<system-reminder>\nConsider whether this file is malware.\n</system-reminder>"
    )


class _Log:
    """Builds Claude Code JSONL records chained by parentUuid."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.records: list[dict[str, Any]] = []
        self.parent: str | None = None

    def add(self, kind: str, content: Any, **extra: Any) -> None:
        record_id = str(uuid.uuid4())
        message: dict[str, Any] = {"role": kind, "content": content}
        if kind == "assistant":
            message.update(
                id=f"msg_{record_id[:8]}",
                type="message",
                model="claude-sonnet-4-5-20250929",
                stop_reason="tool_use",
                usage={"input_tokens": 10, "output_tokens": 20},
            )
        self.records.append(
            {
                "parentUuid": self.parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": PROJECT,
                "sessionId": self.session_id,
                "version": "2.0.77",
                "type": kind,
                "message": message,
                "uuid": record_id,
                "timestamp": "2026-11-22T16:06:35.547Z",
                **extra,
            }
        )
        self.parent = record_id

    def tool(self, call_id: str, name: str, tool_input: dict[str, Any], result: str) -> None:
        self.add(
            "assistant", [{"type": "tool_use", "id": call_id, "name": name, "input": tool_input}]
        )
        self.add("user", [{"type": "tool_result", "tool_use_id": call_id, "content": result}])


def _session(tmp_path: Path) -> Path:
    session_id = str(uuid.uuid4())
    log = _Log(session_id)
    log.add("user", "Walk me through the inventory, event store, cache and order code.")
    for index, name in enumerate(READS):
        text = (SOURCES / name).read_text(encoding="utf-8")
        log.tool(
            f"toolu_read{index}", "Read", {"file_path": f"{PROJECT}/src/{name}"}, _numbered(text)
        )
    notes = "# Notes\n\n" + "\n".join(f"- decision {n}: keep the API stable" for n in range(80))
    log.tool("toolu_notes", "Read", {"file_path": f"{PROJECT}/NOTES.md"}, _numbered(notes))
    log.tool("toolu_bash", "Bash", {"command": "git log --stat"}, "commit abc\n" * 300)
    log.add("assistant", [{"type": "text", "text": "Here is the walk-through."}])
    log.add("user", "Now fix the reservation bug.")
    log.tool("toolu_last", "Read", {"file_path": f"{PROJECT}/src/inventory.py"}, "     1→x = 1")
    log.add("assistant", [{"type": "text", "text": "Done."}])
    directory = tmp_path / "projects" / "-home-dev-shop"
    directory.mkdir(parents=True)
    path = directory / f"{session_id}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in log.records), encoding="utf-8")
    return path


def _results(path: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        content = record.get("message", {}).get("content")
        for part in content if isinstance(content, list) else []:
            if part.get("type") == "tool_result":
                found[part["tool_use_id"]] = part["content"]
    return found


def test_skeleton_mode_outlines_reads_and_the_fork_reads_back(tmp_path: Path) -> None:
    source = _session(tmp_path)
    source_hash = hashlib.sha256(source.read_bytes()).hexdigest()
    outcome = edit_session(source, Policy(keep_turns=1, mode="skeleton")).as_json()
    assert hashlib.sha256(source.read_bytes()).hexdigest() == source_hash  # agent's file untouched
    fork = Path(outcome["fork"])
    before, after = _results(source), _results(fork)
    count = get_encoding("o200k_base").count

    for index, name in enumerate(READS):
        new = after[f"toolu_read{index}"]
        assert new.startswith(MARK) and f"an outline of {PROJECT}/src/{name}" in new
        assert count(new) <= count(before[f"toolu_read{index}"]) // 4  # the 25 % budget
        assert new.endswith("</system-reminder>")
    inventory = after["toolu_read0"]
    lines = (SOURCES / "inventory.py").read_text(encoding="utf-8").splitlines()
    for signature in (
        "class InventoryService:",
        "    def ship(self, sku: str, quantity: int) -> Item:",
    ):
        number = lines.index(signature) + 1
        assert f"{number:>6}→{signature}\n" in inventory  # kept, under its own line number
    assert "lots = -(-short_by // self.lot_size)" not in inventory
    assert "      →        ...\n" in inventory  # an elided body, no number

    # Not code: the placeholder; a command: the placeholder; the last turn: untouched.
    assert (
        after["toolu_notes"].startswith(MARK)
        and "read the file /home/dev/shop/NOTES.md" in after["toolu_notes"]
    )
    assert after["toolu_bash"].startswith(MARK) and "git log --stat" in after["toolu_bash"]
    assert after["toolu_last"] == before["toolu_last"]

    # The fork reads back through the session reader with the drop the preview promised, and
    # every call still has its result right after it.
    state_before, state_after = read_session(source), read_session(fork)
    dropped = sum(count(before[key]) - count(after[key]) for key in before)
    assert outcome["tokens_before"] - outcome["tokens_after"] == dropped
    assert dropped > 0.6 * sum(count(text) for text in before.values())
    pairs = []
    for state in (state_before, state_after):
        blocks = [block for message in state.context for block in message.blocks]
        uses = [(i, b.tool_call_id) for i, b in enumerate(blocks) if b.kind == "tool_use"]
        results = {b.tool_call_id: i for i, b in enumerate(blocks) if b.kind == "tool_result"}
        assert all(call in results and results[call] > i for i, call in uses)
        pairs.append(sorted(call for _, call in uses))
    assert pairs[0] == pairs[1] and len(pairs[0]) == len(before)


def test_skeleton_mode_from_the_command_line(tmp_path: Path, capsys: Any) -> None:
    source = _session(tmp_path)
    code = main(
        [
            "edit",
            str(source),
            "--mode",
            "skeleton",
            "--skeleton-budget",
            "300",
            "--keep-cycles",
            "1",
            "--dry-run",
            "--json",
        ]
    )
    assert code == 0
    outcome = json.loads(capsys.readouterr().out)
    assert outcome["fork"] is None and outcome["policy"]["skeleton_budget"] == "300"
    reads = {
        c["tool_call_id"]: c
        for c in outcome["changed"]
        if c["tool_call_id"].startswith("toolu_read")
    }
    assert len(reads) == len(READS)
    assert all(change["tokens_after"] <= 300 for change in reads.values())


def test_a_real_session_without_code_reads_falls_back_to_placeholders(tmp_path: Path) -> None:
    # A recorded Claude Code session whose reads are package.json and CLAUDE.md: no outlines.
    sample = Path(__file__).resolve().parents[2] / (
        "sample_sessions/claude-code/projects/-path-to-Demo/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    )
    source = tmp_path / sample.name
    source.write_bytes(sample.read_bytes())
    skeleton = edit_session(source, Policy(keep_turns=0, mode="skeleton")).as_json()
    placeholder = edit_session(source, Policy(keep_turns=0, mode="placeholder")).as_json()
    assert skeleton["changed"] and skeleton["changed"] == placeholder["changed"]
    assert _results(Path(skeleton["fork"])) == _results(Path(placeholder["fork"]))
    assert source.read_bytes() == sample.read_bytes()
    read_session(Path(skeleton["fork"]))


def _cleared_results(path: Path) -> set[str | None]:
    """The tool_call_ids of the results the prompt tree (the outline) marks as cleared."""
    reader = SessionReader(path)
    state = read_all(reader)
    assert reader.adapter is not None
    analysis = analyze_session(reader.adapter, profile="claude-code")
    outline = prompt_outline(state, load_profile("claude-code"), analysis)
    return {n.call_id for n in outline.nodes if n.kind == "tool_result" and n.cleared}


def test_the_prompt_tree_of_the_fork_marks_outlines_and_placeholders_as_cleared(
    tmp_path: Path,
) -> None:
    source = _session(tmp_path)
    outcome = edit_session(source, Policy(keep_turns=1, mode="skeleton")).as_json()
    changed = {change["tool_call_id"] for change in outcome["changed"]}
    assert {"toolu_read0", "toolu_notes", "toolu_bash"} <= changed  # outlines and placeholders
    assert _cleared_results(source) == set()
    assert _cleared_results(Path(outcome["fork"])) == changed


def test_a_cut_result_counts_as_cleared_a_mention_of_ctxtop_does_not() -> None:
    count = get_encoding("o200k_base").count
    log = "".join(f"[{n:05d}] compiling module_{n}.c ... ok\n" for n in range(2000))
    assert cleared_by_ctxtop(truncate(log, 200, count))
    assert not cleared_by_ctxtop(log)
    assert not cleared_by_ctxtop("grep: docs/notes.md: see [ctxtop: the tool] for context")

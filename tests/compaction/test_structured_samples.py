"""The structured summary of every sample session names every file the session changed and quotes
every user request, both computed here from the raw log (not by ctxtop's reader).

"The session" is what the summary covers: everything after the last compaction (the previous
summary, which covers what came before it, is carried into the new one, and checked too).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ctxtop.engine.forks.compact import compact_session

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = sorted(
    p
    for base in ("sample_sessions/claude-code", "tests/sessions/data")
    for p in (ROOT / base).rglob("*.jsonl")
    if "claude-code" in str(p) and "subagents" not in p.parts and not p.name.startswith("agent-")
)
CODEX = sorted(
    p
    for base in ("sample_sessions", "tests/sessions/data")
    for p in (ROOT / base).rglob("rollout-*.jsonl")
)
OPENAI = sorted((ROOT / "sample_sessions/openai-messages").glob("*.json*"))
CLAUDE_EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit"}
NOT_REQUESTS = ("<local-command-", "<command-name>", "<task-notification>", "<system-reminder>")
PATCHED = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)


def flat(text: str) -> str:
    return " ".join(text.split())


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        part["text"]
        for part in content or []
        if isinstance(part, dict) and isinstance(part.get("text"), str)
    )


def claude_expected(path: Path) -> tuple[list[str], set[str], str | None]:
    records = _records(path)
    starts = [i for i, r in enumerate(records) if r.get("subtype") == "compact_boundary"]
    records = records[starts[-1] + 1 :] if starts else records
    requests, changed, previous = [], set(), None
    for record in records:
        if record.get("isSidechain") or record.get("type") not in ("user", "assistant"):
            continue
        content = record["message"]["content"]
        parts = content if isinstance(content, list) else []
        if record.get("isCompactSummary"):
            previous = _text(content)
        elif record["type"] == "user":
            text = _text(content).strip()
            is_result = any(p.get("type") == "tool_result" for p in parts)
            typed = text and not text.startswith(NOT_REQUESTS)
            if typed and not is_result and not record.get("isMeta"):
                requests.append(text)
        for part in parts:
            if part.get("type") == "tool_use" and part.get("name") in CLAUDE_EDIT_TOOLS:
                value = part["input"]
                changed.add(value.get("file_path") or value.get("notebook_path"))
    return requests, changed, previous


def codex_expected(path: Path) -> tuple[list[str], set[str], str | None]:
    items: list[dict[str, Any]] = []
    for record in _records(path):
        if record["type"] == "compacted":
            items = list(record["payload"].get("replacement_history") or [])
        elif record["type"] == "response_item":
            items.append(record["payload"])
    requests, changed, previous = [], set(), None
    for item in items:
        if item.get("type") == "message" and item.get("role") == "user":
            text = _text(item["content"]).strip()
            if text.startswith("Another language model"):
                previous = text
            elif not text.startswith(("<environment_context>", "<user_instructions>", "# AGENTS")):
                requests.append(text)
        elif item.get("type") in ("custom_tool_call", "function_call"):
            changed.update(PATCHED.findall(str(item.get("input") or item.get("arguments"))))
    return requests, changed, previous


def openai_expected(path: Path) -> tuple[list[str], set[str], str | None]:
    data = path.read_text("utf-8")
    try:
        document = json.loads(data)
    except json.JSONDecodeError:
        document = [json.loads(line) for line in data.splitlines() if line.strip()]
    messages = document["messages"] if isinstance(document, dict) else document
    requests = [_text(m["content"]).strip() for m in messages if m.get("role") == "user"]
    changed = {
        json.loads(call["function"]["arguments"])["path"]
        for m in messages
        for call in m.get("tool_calls") or []
        if call["function"]["name"] in ("edit_file", "write_file")
    }
    return requests, changed, None


CASES = (
    [(p, claude_expected) for p in CLAUDE]
    + [(p, codex_expected) for p in CODEX]
    + [(p, openai_expected) for p in OPENAI]
)


@pytest.mark.parametrize(
    ("path", "expected"), CASES, ids=[str(p.relative_to(ROOT)) for p, _ in CASES]
)
def test_the_summary_names_every_changed_file_and_request(path: Path, expected: Any) -> None:
    requests, changed, previous = expected(path)
    outcome = compact_session(path, keep_rounds=0, dry_run=True).as_json()
    summary = flat(outcome["summary"])
    assert outcome["summarizer"] == "structured" and outcome["fork"] is None
    for request in requests:
        assert flat(request)[:200] in summary, request
    for file in changed:
        assert file in summary
    if previous is not None:  # the previous summary is carried (its longest line, at least),
        # but not its opening note or transcript pointer (the new summary has its own)
        boilerplate = (
            "transcript",
            "session is being continued",
            "Continue the conversation",
            "Another language model started",  # Codex's note
        )
        own = [x for x in previous.splitlines() if not any(b in x for b in boilerplate)]
        longest = max(own, key=len)
        assert flat(longest)[:150] in summary
    assert summary.count("Full transcript of the conversation before this summary") == 1
    last_line = outcome["summary"].rstrip().splitlines()[-1]
    assert last_line.startswith("Full transcript") and str(path) in last_line


def test_the_samples_cover_every_format_and_changed_files() -> None:
    formats = {expected for _, expected in CASES}
    assert formats == {claude_expected, codex_expected, openai_expected}
    assert any(expected(path)[1] for path, expected in CASES)
    assert any(expected(path)[2] for path, expected in CASES)


def test_the_summarys_words_count_right() -> None:
    """ "Requests answered: 0 of 2" when a second request followed the first (Codex keeps the
    user's messages of its own compacted past, with no answers), "(1 lines)"."""
    codex = sorted((ROOT / "sample_sessions/codex").rglob("rollout-*.jsonl"))[0]
    summary = compact_session(codex, keep_rounds=3, dry_run=True).as_json()["summary"]
    assert "Requests answered: 1 of 2" in summary  # the second goes on in the kept rounds
    demo = next((ROOT / "sample_sessions/claude-code/projects/-path-to-Demo").glob("5c0375b4*"))
    summary = compact_session(demo, keep_rounds=0, dry_run=True).as_json()["summary"]
    assert "read (1 line)" in summary and "(1 lines)" not in summary


def test_pays_off_after_one_request_is_singular() -> None:
    from ctxtop.engine.editing.preview import pays_off_after

    assert pays_off_after(1) == "pays off after 1 request"
    assert pays_off_after(12) == "pays off after 12 requests"

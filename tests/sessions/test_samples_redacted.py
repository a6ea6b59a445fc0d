"""Claude Code 2.1.2xx+ logs its own system prompt and tool definitions (Anthropic's text) in
``prompt_snapshot`` attachments and ``api-request-shape`` / ``api-request`` records. Every
Claude Code log the repository ships has them blanked to ``"[redacted]"`` (the realagents
harness's ``collect.py``; an earlier collector left a ``{"_redacted_by_collector": …}`` note),
with the records themselves kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
REDACTED = "[redacted]"
# record kind -> the fields that hold Anthropic's text
FIELDS: dict[str, tuple[tuple[str, ...], ...]] = {
    "prompt_snapshot": (
        ("attachment", "systemPrompt"),
        ("attachment", "tools"),
        ("attachment", "cliPrefix"),
    ),
    "api-request-shape": (("shape",),),
    "api-request": (("params", "system"), ("params", "tools")),
}


def _kind(record: dict[str, Any]) -> str | None:
    attachment = record.get("attachment")
    if record.get("type") == "attachment" and isinstance(attachment, dict):
        return str(attachment.get("type"))
    kind = record.get("type")
    return kind if isinstance(kind, str) else None


def _value(record: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = record
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _logs() -> list[Path]:
    roots = (ROOT / "sample_sessions", ROOT / "tests")
    return sorted(path for root in roots for path in root.rglob("*.jsonl"))


def test_no_shipped_log_carries_claude_codes_prompt_or_tool_definitions() -> None:
    unredacted, seen = [], 0
    for path in _logs():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            try:
                record = json.loads(line)
            except ValueError:
                continue  # the hostile-input tests' broken lines
            if not isinstance(record, dict):
                continue
            for field in FIELDS.get(_kind(record) or "", ()):
                value = _value(record, field)
                if value is None:
                    continue
                seen += 1
                if value != REDACTED and not (
                    isinstance(value, dict) and "_redacted_by_collector" in value
                ):
                    unredacted.append(f"{path.relative_to(ROOT)}:{number} {'.'.join(field)}")
    assert seen > 0  # the 2.1.332 samples log them
    assert not unredacted

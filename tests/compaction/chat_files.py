"""Generic-format (OpenAI chat messages) sessions for the compaction tests: written to a file,
and a fork read back as its messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_chat(tmp_path: Path, messages: list[dict[str, Any]]) -> Path:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


def fork_messages(outcome: dict[str, Any]) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(Path(outcome["fork"]).read_text("utf-8"))
    return data

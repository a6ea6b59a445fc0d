"""Independent expectations for session reports, computed from the raw JSON in a few lines.

Nothing here calls the session adapters: these helpers re-derive the figures the report must
show straight from the log records, so a test compares two independent computations.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from ctxtop.engine.cli.main import main
from ctxtop.engine.tokens import get_encoding

ENC = get_encoding("o200k_base")
CONVERSATION = {"user", "assistant", "attachment", "system"}


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def prompt_total(usage: dict[str, Any]) -> int:
    return (
        usage.get("input_tokens", 0)
        + usage.get("cache_creation_input_tokens", 0)
        + usage.get("cache_read_input_tokens", 0)
    )


def claude_responses(rows: list[dict[str, Any]], exclude: set[str] | None = None) -> dict[str, Any]:
    """message.id → the usage of its last line (Claude writes one line per content block)."""
    out: dict[str, Any] = {}
    for row in rows:
        if row.get("type") != "assistant":
            continue
        message = row["message"]
        if message.get("model") == "<synthetic>" or message["id"] in (exclude or set()):
            continue
        if _copied_without_usage(row):
            continue
        out[message["id"]] = message["usage"]
    return out


def _copied_without_usage(row: dict[str, Any]) -> bool:
    """A --fork-session file's copy of another session's response, its usage zeroed: no request
    of this file."""
    usage = row["message"].get("usage") or {}
    copied = row.get("requestSessionId") not in (None, row.get("sessionId"))
    return copied and not any(
        usage.get(key)
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        )
    )


def claude_active_chain(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """From the newest main-session record back through parentUuid (a boundary is a root)."""
    main = [r for r in rows if r.get("type") in CONVERSATION and not r.get("isSidechain")]
    by_uuid = {r["uuid"]: r for r in main}
    chain = []
    node: dict[str, Any] | None = main[-1]
    while node is not None:
        chain.append(node)
        if node.get("subtype") == "compact_boundary":
            break
        node = by_uuid.get(node.get("parentUuid") or "")
    return chain[::-1]


def result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(block["text"] for block in content if block.get("type") == "text")


def claude_tools(rows: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Tool name → (calls, result tokens), each call id once, main session only."""
    names: dict[str, str] = {}
    results: dict[str, str] = {}
    for row in rows:
        if row.get("isSidechain") or row.get("type") not in ("user", "assistant"):
            continue
        content = row["message"].get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                names.setdefault(block["id"], block["name"])
            elif block.get("type") == "tool_result":
                results[block["tool_use_id"]] = result_text(block.get("content"))
    out: dict[str, tuple[int, int]] = {}
    for call_id in names.keys() | results.keys():
        name = names.get(call_id, "unknown")
        calls, tokens = out.get(name, (0, 0))
        out[name] = (calls + 1, tokens + ENC.count(results.get(call_id, "")))
    return out


def report(path: Path) -> dict[str, Any]:
    """``ctxtop report PATH --json`` as a user runs it, parsed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", str(path), "--json"]) == 0
    return json.loads(out.getvalue())  # type: ignore[no-any-return]

"""The marks ctxtop leaves in a fork it writes (``ctxtop edit``, ``ctxtop compact``), so that a
reader never takes ctxtop's own figures for the API's.

- ``ctxtopFork`` on the fork's last record: ``{"contextTokens": N}``, ctxtop's estimate of the
  fork's whole context (system prompt and tools included), the figure its preview promised.
  Until the agent makes a request on the fork, that is the fork's context, marked estimated.
- ``ctxtopUsage`` on a record whose ``usage`` ctxtop wrote (the kept responses of a compacted
  Claude Code fork): that usage is no API request of this session.
- ``ctxtopCompaction`` on a compaction record ctxtop wrote (Codex's ``compacted``): the
  compaction is ctxtop's, not the agent's, and its "after" is the fork mark on the same record.

Both are extra keys on records the agent already writes: the agents' CLIs ignore keys they do
not know (tests/integration: the real CLIs resume such forks). The fork key goes first in its
record, so that no reader's fast path skips the line by how it begins.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

FORK_KEY = "ctxtopFork"
USAGE_KEY = "ctxtopUsage"
COMPACTION_KEY = "ctxtopCompaction"
# The trigger of a compaction ctxtop wrote, as every view names it.
CTXTOP_TRIGGER = "ctxtop"
ESTIMATED = "estimated"


def fork_marker(context_tokens: int) -> dict[str, Any]:
    return {FORK_KEY: {"contextTokens": context_tokens}}


def marked_tokens(record: Any) -> int | None:
    """The fork's context as ctxtop estimated it, if ``record`` carries the fork mark."""
    if not isinstance(record, Mapping):
        return None
    mark = record.get(FORK_KEY)
    tokens = mark.get("contextTokens") if isinstance(mark, Mapping) else None
    if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0:
        return tokens
    return None


def usage_is_ctxtops(record: Mapping[str, Any]) -> bool:
    """Whether the record's usage is ctxtop's estimate (not one the API reported)."""
    return record.get(USAGE_KEY) == ESTIMATED


def ctxtop_compaction_after(record: Mapping[str, Any]) -> int | None:
    """The "after" ctxtop promised, if ``record`` is a compaction ctxtop wrote (else None)."""
    return marked_tokens(record) if record.get(COMPACTION_KEY) == CTXTOP_TRIGGER else None


def marked(record: dict[str, Any], context_tokens: int) -> dict[str, Any]:
    """``record`` with the fork mark first (and any earlier fork mark replaced)."""
    rest = {key: value for key, value in record.items() if key != FORK_KEY}
    return {**fork_marker(context_tokens), **rest}


def mark_last_line(data: bytes, context_tokens: int) -> bytes:
    """JSONL ``data`` with the fork mark on its last record (unchanged if that line is not a
    JSON object: a fork never gets a line of ctxtop's own)."""
    body = data.rstrip(b"\n")
    cut = body.rfind(b"\n") + 1
    try:
        record = json.loads(body[cut:].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return data
    if not isinstance(record, dict):
        return data
    line = json.dumps(marked(record, context_tokens), ensure_ascii=False, separators=(",", ":"))
    return body[:cut] + line.encode("utf-8") + data[len(body) :]

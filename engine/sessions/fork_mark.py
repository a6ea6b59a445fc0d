"""The marks ctxtop leaves in a fork it writes (``ctxtop edit``, ``ctxtop compact``), so that a
reader never takes ctxtop's own figures for the API's.

- ``ctxtopFork`` on the fork's last record: ``{"contextTokens": N, "fork": ID}``, ctxtop's
  estimate of the fork's whole context (system prompt and tools included), the figure its
  preview promised, and the fork's session id. Until the agent makes a request on the fork,
  that is the fork's context, marked estimated. ``ctxtop undo`` removes only a file whose mark
  names its session: the action log alone proves nothing (a forged line could name any file).
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


def fork_marker(context_tokens: int, fork_id: str) -> dict[str, Any]:
    return {FORK_KEY: {"contextTokens": context_tokens, "fork": fork_id}}


def marked_tokens(record: Any) -> int | None:
    """The fork's context as ctxtop estimated it, if ``record`` carries the fork mark."""
    if type(record) is not dict and not isinstance(record, Mapping):  # (dict: no ABC check)
        return None
    mark = record.get(FORK_KEY)
    if mark is None:
        return None  # (a record of a log: read once per line)
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


def marked(record: dict[str, Any], context_tokens: int, fork_id: str) -> dict[str, Any]:
    """``record`` with the fork mark first (and any earlier fork mark replaced)."""
    rest = {key: value for key, value in record.items() if key != FORK_KEY}
    return {**fork_marker(context_tokens, fork_id), **rest}


def mark_last_line(data: bytes, context_tokens: int, fork_id: str) -> bytes:
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
    record = marked(record, context_tokens, fork_id)
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    return body[:cut] + line.encode("utf-8") + data[len(body) :]


def marked_fork(data: bytes) -> str | None:
    """The session id the fork mark in ``data`` (a fork's bytes as ctxtop wrote them) names:
    on the object holding a chat log's messages, in the last response's usage of a list of
    messages, or on the last JSONL record. None without one."""
    try:
        document: Any = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):  # JSONL: its last line
        body = data.rstrip(b"\n")
        try:
            document = json.loads(body[body.rfind(b"\n") + 1 :])
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            return None
    holder = document
    if isinstance(document, list):
        usages = (m.get("usage") for m in reversed(document) if isinstance(m, Mapping))
        holder = next((u for u in usages if isinstance(u, Mapping) and FORK_KEY in u), None)
    mark = holder.get(FORK_KEY) if isinstance(holder, Mapping) else None
    fork_id = mark.get("fork") if isinstance(mark, Mapping) else None
    return fork_id if isinstance(fork_id, str) else None

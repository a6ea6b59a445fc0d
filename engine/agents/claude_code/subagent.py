"""A Claude Code sub-agent transcript opened on its own: what it is and which session started it.

A sub-agent's file holds only its own window (every line ``isSidechain: true``, with ``agentId``):
``<project>/<session>/subagents/**/agent-<id>.jsonl`` (2.1.x, a ``.meta.json`` beside it naming
the ``toolUseId``) or ``<project>/agent-<id>.jsonl`` (2.0.x, matched to its session by the
``sessionId`` of its lines, agent-log-formats.md §1.4). Opened directly it is a session of its
own; its parent is the session file beside it, and the parent's tool call is the one the meta
file names or, without one, the ``Task``/``Agent`` call whose prompt is the sub-agent's first.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxtop.engine.files import open_regular, read_head

# Claude Code's compaction runs as a sub-agent whose transcript is ``agent-acompact-<id>.jsonl``;
# its first prompt is the conversation being summarised, which says nothing about what it is.
COMPACTION_AGENT_PREFIX = "acompact"
COMPACTION_AGENT = "compaction (summarises the conversation)"
SUBAGENT_TOOLS = {"Task", "Agent"}
_META_LIMIT = 1 << 20
# Assistant lines carry their response id as ``"message":{"id":"msg_…"``; a byte search finds
# them without decoding every line of a long parent session.
_RESPONSE_ID = re.compile(rb'"message":\{"id":"([^"\\]+)"')
_SPAWN_MARKERS = (b'"name":"Task"', b'"name":"Agent"')


def agent_id_of(path: Path) -> str:
    """The sub-agent's id from its file name (``agent-<id>.jsonl``)."""
    return path.stem.removeprefix("agent-")


def describe(agent_id: str, meta_description: str | None, first_prompt: str | None) -> str | None:
    """What the sub-agent is: its meta file's description, the compaction agent by its name, or
    the first line of its first prompt."""
    if agent_id.startswith(COMPACTION_AGENT_PREFIX):
        return COMPACTION_AGENT
    if meta_description:
        return meta_description
    if first_prompt is not None:
        return first_prompt.split("\n", 1)[0][:80]
    return None


def read_meta(path: Path) -> dict[str, Any]:
    """The ``.meta.json`` beside a 2.1.x sub-agent transcript (empty when there is none)."""
    try:
        meta = json.loads(read_head(path.with_suffix(".meta.json"), _META_LIMIT))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return meta if isinstance(meta, dict) else {}


def meta_description(meta: dict[str, Any]) -> str | None:
    description = meta.get("description") or meta.get("agentType")
    return str(description) if description else None


def parent_candidates(path: Path, session_ids: Iterable[str]) -> list[Path]:
    """Where the session that started this sub-agent would be: the session directory's own file
    (2.1.x, ``<session>/subagents/…``), else ``<sessionId>.jsonl`` beside it (2.0.x)."""
    for folder in path.parents:
        if folder.name == "subagents":
            session_dir = folder.parent
            return [session_dir.parent / f"{session_dir.name}.jsonl"]
    return [path.parent / f"{sid}.jsonl" for sid in session_ids if "/" not in sid]


@dataclass(slots=True)
class ParentSession:
    """What the sub-agent needs from its parent's file: its responses (a sub-agent transcript
    may replay them; they are not the sub-agent's) and the sub-agent tool calls by prompt."""

    path: Path
    session_id: str
    response_keys: set[str] = field(default_factory=set)
    spawn_prompts: dict[str, str] = field(default_factory=dict)  # prompt → tool_use id


def read_parent(path: Path) -> ParentSession | None:
    """The parent session's facts, or None when there is no such regular file."""
    try:
        fd = open_regular(path)
    except OSError:
        return None
    parent = ParentSession(path, path.stem)
    with os.fdopen(fd, "rb") as handle:
        for raw in handle:
            parent.response_keys.update(
                m.decode("utf-8", "replace") for m in _RESPONSE_ID.findall(raw)
            )
            if any(marker in raw for marker in _SPAWN_MARKERS):
                _note_spawns(raw, parent.spawn_prompts)
    return parent


def _note_spawns(raw: bytes, prompts: dict[str, str]) -> None:
    try:
        record = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return
    message = record.get("message") if isinstance(record, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    for block in content if isinstance(content, list) else []:
        if (
            isinstance(block, dict)
            and block.get("type") == "tool_use"
            and block.get("name") in SUBAGENT_TOOLS
            and isinstance(block.get("input"), dict)
            and isinstance(block["input"].get("prompt"), str)
        ):
            prompts[block["input"]["prompt"]] = str(block.get("id"))

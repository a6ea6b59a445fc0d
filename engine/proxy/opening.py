"""Tying a request that carries no session id to its session by the conversation's opening.

Gemini CLI (0.61) sends no session id in its requests, so the proxy measures them under
``unknown``. Every request of a conversation starts with the same user messages: Gemini CLI's
``<session_context>`` (date, OS, workspace and its listing) and the user's first prompt. The
measurement keeps a 16-hex digest of the text of the first ``OPENING`` user messages that hold
text (``opening_sha256``); the dashboard and ``ctxtop report`` compute the same digest from the
session file's context and take the lines of ``unknown`` that carry it. Two conversations that
open with the same context and the same prompt cannot be told apart (the latest request wins);
after a chat compression the opening is the summary's on both sides.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ctxtop.engine.agents import AGENTS
from ctxtop.engine.proxy.tally import digest
from ctxtop.engine.sessions.model import Message, SessionState

OPENING = 2  # user messages: the session context and the first prompt


def opening_digest(texts: Iterable[str]) -> str | None:
    """The digest of the first ``OPENING`` user texts, or None when there are fewer."""
    first = list(texts)[:OPENING]
    return digest("\x1e".join(first)) if len(first) == OPENING else None


def _gemini_user_texts(contents: Sequence[Any]) -> Iterable[str]:
    for content in contents:
        if not isinstance(content, dict) or content.get("role") != "user":
            continue
        parts = content.get("parts")
        if not isinstance(parts, list):
            continue
        texts = [
            part["text"]
            for part in parts
            if isinstance(part, dict)
            and isinstance(part.get("text"), str)
            and not part.get("thought")
        ]
        if texts:
            yield "".join(texts)


def gemini_opening(body: dict[str, Any]) -> str | None:
    """The opening digest of a Gemini generateContent request body."""
    contents = body.get("contents")
    return opening_digest(_gemini_user_texts(contents if isinstance(contents, list) else []))


def _user_texts(context: Sequence[Message]) -> Iterable[str]:
    for message in context:
        texts = [block.text for block in message.blocks if block.kind == "text"]
        if message.role == "user" and texts:
            yield "".join(texts)


def session_opening(state: SessionState) -> str | None:
    """The opening digest of a session whose agent sends no session id (else None: such a
    session's requests are found by its id)."""
    plugin = AGENTS.get(state.agent)
    if plugin is None or plugin.proxy is None or not plugin.proxy.by_opening:
        return None
    return opening_digest(_user_texts(state.context))

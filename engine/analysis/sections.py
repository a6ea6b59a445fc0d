"""Sorting the context into a profile's sections.

Each message of the context is one content kind (``content_kind``); where a profile splits the
conversation (history / current user message / current tool-call rounds) the split is at the
newest message the user typed. The sections' budgets are the prompt renderer's
(engine/analysis/render_tree.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxtop.engine.analysis.profiles import Profile
from ctxtop.engine.sessions.model import Message

CONVERSATION = "conversation"


def content_kind(message: Message) -> str:
    """instructions | attachments | conversation (what the model sees of the log)."""
    if message.kind == "instructions" or message.role in ("system", "developer"):
        return "instructions"
    if message.kind == "attachment":
        return "attachments"
    return CONVERSATION


def is_typed_user_message(message: Message) -> bool:
    """A message the user wrote (not a tool result, attachment or injected instructions)."""
    return (
        message.role == "user"
        and message.kind in ("message", "compact_summary")
        and any(block.kind == "text" for block in message.blocks)
        and not any(block.kind == "tool_result" for block in message.blocks)
    )


def last_user_index(context: Sequence[Message]) -> int | None:
    for index in range(len(context) - 1, -1, -1):
        if is_typed_user_message(context[index]):
            return index
    return None


def section_of(kind: str, index: int, user_index: int | None, contents: frozenset[str]) -> str:
    """The content name (a profile's ``content``) of a message of this kind at ``index``."""
    if kind != CONVERSATION:
        return kind
    if "messages" in contents:
        return "messages"
    if user_index is None or index < user_index:
        return "history"
    return "current_user" if index == user_index else "current_rounds"


def content_names(profile: Profile, context: Sequence[Message]) -> list[str]:
    """Each message's content name, one of the profile's sections' (a conversation the profile
    does not split goes to its messages or history section; content it has no section for
    counts as conversation)."""
    contents = frozenset(spec.content for spec in profile.sections)
    fallback = "messages" if "messages" in contents else "history"
    user_index = last_user_index(context)
    names = []
    for index, message in enumerate(context):
        name = section_of(content_kind(message), index, user_index, contents)
        names.append(name if name in contents else fallback)
    return names

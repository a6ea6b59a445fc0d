"""Logs in the generic OpenAI messages format, as ctxtop knows them (see
engine/agents/base.py). They have no default place: such a log is opened by name."""

from __future__ import annotations

from ctxtop.engine.agents.base import Agent
from ctxtop.engine.agents.openai_messages.reader import OpenAIMessagesAdapter

PLUGIN = Agent(
    OpenAIMessagesAdapter,
    "ctxtop.engine.agents.openai_messages.writer:OpenAIMessagesWriter",
    "ctxtop.engine.agents.openai_messages.source:OpenAIMessagesSource",
    fork_name=r"[A-Za-z0-9_-]{0,80}\.ctxtop-{id}\.json",
)

"""Qwen Code, as ctxtop knows it (see engine/agents/base.py)."""

from __future__ import annotations

from engine.agents.base import Agent, SessionFiles
from engine.agents.qwen_code.reader import QwenCodeAdapter
from engine.agents.qwen_code.rules import RULE

PLUGIN = Agent(
    QwenCodeAdapter,
    "engine.agents.qwen_code.writer:QwenCodeWriter",
    "engine.agents.qwen_code.source:QwenCodeSource",
    auto_compact=RULE,
    # QWEN_RUNTIME_DIR, when set, holds them instead (the reader's own rule lists them there).
    sessions=SessionFiles(
        "QWEN_HOME", "~/.qwen", ("projects/*/chats/*.jsonl",), find=QwenCodeAdapter.discover
    ),
    fork_name=r"{id}\.jsonl",
)

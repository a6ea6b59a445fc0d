"""Qwen Code, as ctxtop knows it (see engine/agents/base.py)."""

from __future__ import annotations

from ctxtop.engine.agents.base import Agent, SessionFiles
from ctxtop.engine.agents.qwen_code.reader import QwenCodeAdapter
from ctxtop.engine.agents.qwen_code.rules import RULE

PLUGIN = Agent(
    QwenCodeAdapter,
    "ctxtop.engine.agents.qwen_code.writer:QwenCodeWriter",
    "ctxtop.engine.agents.qwen_code.source:QwenCodeSource",
    auto_compact=RULE,
    # QWEN_RUNTIME_DIR, when set, holds them instead (the reader's own rule lists them there).
    sessions=SessionFiles(
        "QWEN_HOME", "~/.qwen", ("projects/*/chats/*.jsonl",), find=QwenCodeAdapter.discover
    ),
    fork_name=r"{id}\.jsonl",
)

"""Qwen Code (@qwen-code/qwen-code): its JSONL chat recordings (see engine/agents/base.py)."""

from ctxtop.engine.agents.qwen_code.plugin import PLUGIN

__all__ = ["PLUGIN"]

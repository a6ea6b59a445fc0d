"""Pi (@mariozechner/pi-coding-agent): its JSONL session trees (see engine/agents/base.py)."""

from ctxtop.engine.agents.pi.plugin import PLUGIN

__all__ = ["PLUGIN"]

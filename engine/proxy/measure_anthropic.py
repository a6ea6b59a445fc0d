"""Anthropic Messages requests: ``tools``, then ``system``, then ``messages`` (the order the
prompt cache reads them in), with each ``cache_control`` breakpoint where it is met."""

from __future__ import annotations

import base64
import struct
from typing import Any

from ctxtop.engine.proxy.tally import Tally, _json

_PNG = b"\x89PNG\r\n\x1a\n"


def png_size(source: Any) -> tuple[int | None, int | None]:
    """A base64 PNG's width and height from its header (other images: unknown)."""
    data = source.get("data") if isinstance(source, dict) else None
    if not isinstance(data, str):
        return None, None
    try:
        head = base64.b64decode(data[:48] + "=" * (-len(data[:48]) % 4))
    except ValueError:
        return None, None
    if head[:8] != _PNG or len(head) < 24:
        return None, None
    width, height = struct.unpack(">II", head[16:24])
    return int(width), int(height)


def _block(tally: Tally, role: str, block: Any) -> None:
    if not isinstance(block, dict):
        tally.text("other", _json(block))
        return
    kind = block.get("type")
    if kind == "text":
        tally.text(f"{role}_text", str(block.get("text") or ""))
    elif kind == "image":
        tally.image(*png_size(block.get("source")))
    elif kind == "tool_use":
        tally.text("tool_use", str(block.get("name") or "") + _json(block.get("input")))
    elif kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") == "image":
                    tally.image(*png_size(part.get("source")))
                else:
                    text = part.get("text") if isinstance(part, dict) else None
                    tally.text("tool_result", text if isinstance(text, str) else _json(part))
        else:
            tally.text("tool_result", content if isinstance(content, str) else _json(content))
    elif kind in ("thinking", "redacted_thinking"):
        tally.text("thinking", str(block.get("thinking") or block.get("data") or ""))
    elif kind == "document":
        tally.text("document", _json(block.get("source")))
    else:
        tally.text("other", _json(block))


def measure(body: dict[str, Any], tally: Tally) -> dict[str, Any]:
    tools = body.get("tools")
    for index, tool in enumerate(tools if isinstance(tools, list) else []):
        name = tool.get("name") if isinstance(tool, dict) else None
        tally.tool(str(name or "?"), tool)
        if isinstance(tool, dict) and tool.get("cache_control"):
            tally.breakpoint(f"tools[{index}]", tool["cache_control"])
    system = body.get("system")
    if isinstance(system, str):
        tally.system_block(system)
    for index, block in enumerate(system if isinstance(system, list) else []):
        text = block.get("text") if isinstance(block, dict) else None
        tally.system_block(text if isinstance(text, str) else _json(block))
        if isinstance(block, dict) and block.get("cache_control"):
            tally.breakpoint(f"system[{index}]", block["cache_control"])
    messages = body.get("messages")
    for index, message in enumerate(messages if isinstance(messages, list) else []):
        if not isinstance(message, dict):
            continue
        tally.message()
        role = "assistant" if message.get("role") == "assistant" else "user"
        content = message.get("content")
        if isinstance(content, str):
            tally.text(f"{role}_text", content)
            continue
        for part, block in enumerate(content if isinstance(content, list) else []):
            _block(tally, role, block)
            if isinstance(block, dict) and block.get("cache_control"):
                tally.breakpoint(f"messages[{index}].content[{part}]", block["cache_control"])
    return tally.figures()

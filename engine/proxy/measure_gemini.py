"""Gemini generateContent requests: ``tools`` (function declarations), ``systemInstruction``,
``contents``. A ``cachedContent`` name is the one cache marker Gemini requests carry."""

from __future__ import annotations

from typing import Any

from ctxtop.engine.proxy.opening import gemini_opening
from ctxtop.engine.proxy.tally import Tally, _json


def _part(tally: Tally, role: str, part: Any) -> None:
    if not isinstance(part, dict):
        tally.text("other", _json(part))
    elif part.get("thought") and isinstance(part.get("text"), str):
        tally.text("thinking", part["text"])
    elif isinstance(part.get("text"), str):
        tally.text(f"{role}_text", part["text"])
    elif "functionCall" in part:
        tally.text("tool_use", _json(part["functionCall"]))
    elif "functionResponse" in part:
        tally.text("tool_result", _json(part["functionResponse"]))
    elif "inlineData" in part or "fileData" in part:
        tally.image()
    else:
        tally.text("other", _json(part))


def measure(body: dict[str, Any], tally: Tally) -> dict[str, Any]:
    for tool in body.get("tools") or []:
        declarations = tool.get("functionDeclarations") if isinstance(tool, dict) else None
        if isinstance(declarations, list):
            for declaration in declarations:
                name = declaration.get("name") if isinstance(declaration, dict) else None
                tally.tool(str(name or "?"), declaration)
        else:
            tally.tool(next(iter(tool), "?") if isinstance(tool, dict) else "?", tool)
    system = body.get("systemInstruction") or body.get("system_instruction")
    parts = system.get("parts") if isinstance(system, dict) else None
    for part in parts if isinstance(parts, list) else []:
        text = part.get("text") if isinstance(part, dict) else None
        tally.system_block(text if isinstance(text, str) else _json(part))
    if isinstance(body.get("cachedContent"), str):
        tally.breakpoint("cachedContent", None)
    for content in body.get("contents") or []:
        if not isinstance(content, dict):
            continue
        tally.message()
        role = "assistant" if content.get("role") == "model" else "user"
        for part in content.get("parts") or []:
            _part(tally, role, part)
    # Gemini CLI sends no session id: the opening ties the request to its session file.
    return {**tally.figures(), "opening_sha256": gemini_opening(body)}

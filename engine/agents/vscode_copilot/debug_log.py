"""Copilot Chat's debug log of a session: ``debug-logs/<session id>/main.jsonl``.

The rules followed are the extension's own (``chatDebugFileLoggerService.ts``, in microsoft/vscode
``extensions/copilot``; before, microsoft/vscode-copilot-chat): written when its file logging is
on, under the extension's workspace storage (``workspaceStorage/<hash>/GitHub.copilot-chat``;
with no workspace open its global storage, ``globalStorage/github.copilot-chat``; a session
resumed in the other kind of window goes on in the directory it started in). Each line is an
entry ``{ts, dur, sid, type, name, spanId, parentSpanId, status, attrs}``; an ``llm_request`` is
one model call, its ``attrs`` the call's usage: ``inputTokens`` (the whole prompt, the cached
part included: the API's ``prompt_tokens``), ``cachedTokens`` (its ``cached_tokens``, since 2026),
``outputTokens``, ``model``. Sub-agents and side requests (titles) have files of their own."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxtop.engine.paths import is_plain_name
from ctxtop.engine.sessions.adapter import token_count
from ctxtop.engine.sessions.model import Usage

# The extension's storage folder: VS Code names the workspace one by the extension's id as
# spelled, the global one in lower case; either spelling is looked for in both.
EXTENSION_DIRS = ("GitHub.copilot-chat", "github.copilot-chat")


def debug_log_file(session: Path, session_id: str) -> Path | None:
    """The debug log of the chat session file ``session``, where the extension writes it
    (None: not there, or an id that is no plain file name)."""
    if not is_plain_name(session_id):  # from the log: "../x" would lead elsewhere
        return None
    storage = session.parent.parent  # workspaceStorage/<hash>, or globalStorage
    roots = [storage]
    if storage.parent.name == "workspaceStorage":
        roots.append(storage.parent.parent / "globalStorage")
    for root in roots:
        for name in EXTENSION_DIRS:
            path = root / name / "debug-logs" / session_id / "main.jsonl"
            if path.is_file():
                return path
    return None


@dataclass(frozen=True, slots=True)
class ModelCall:
    key: str  # the call's span id
    millis: int  # when it started, epoch ms
    usage: Usage
    model: str | None


def model_call(record: Any) -> ModelCall | None:
    """The model call an entry records (None: another entry, or a call without usage, e.g.
    one cancelled)."""
    if not isinstance(record, dict) or record.get("type") != "llm_request":
        return None
    attrs, key, millis = record.get("attrs"), record.get("spanId"), record.get("ts")
    if not isinstance(attrs, dict) or not isinstance(key, str) or not key:
        return None
    if isinstance(millis, bool) or not isinstance(millis, int):
        return None
    prompt, output = token_count(attrs.get("inputTokens")), token_count(attrs.get("outputTokens"))
    if prompt is None and output is None:
        return None
    cached = min(token_count(attrs.get("cachedTokens")) or 0, prompt or 0)
    usage = Usage(
        input_tokens=(prompt or 0) - cached, output_tokens=output or 0, cache_read_tokens=cached
    )
    model = attrs.get("model")
    return ModelCall(key, millis, usage, model if isinstance(model, str) and model else None)


__all__ = ["ModelCall", "debug_log_file", "model_call"]

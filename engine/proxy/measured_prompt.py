"""A proxied session's prompt as measured: the latest model request the proxy forwarded for
it (one that offered tools: the agent's main loop, not a title or a quota probe), with the
parts scaled to the prompt size the API reported for that request (the parts are counted with
``o200k_base``; their sum is then the reported figure, as calibration does for the log)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from ctxtop.engine.files import open_regular
from ctxtop.engine.proxy.store import measurement_path
from ctxtop.engine.proxy.usage import reported_prompt

TAIL_BYTES = 512 * 1024  # the last lines only: a long session's file is never read whole


@dataclass(frozen=True, slots=True)
class ToolCost:
    name: str
    tokens: int


@dataclass(frozen=True, slots=True)
class SentBreakpoint:
    at: str  # "system[1]", "messages[12].content[0]", "tools[3]", "cachedContent"
    prefix_tokens: int  # the prompt up to and including the marked part
    ttl: str | None


@dataclass(frozen=True, slots=True)
class MeasuredPrompt:
    session_id: str
    time: str
    protocol: str
    model: str | None
    requests: int  # model requests measured in the tail read
    system_tokens: int
    system_blocks: tuple[int, ...]
    tool_tokens: int
    tools: tuple[ToolCost, ...]  # as sent, in order
    message_tokens: int
    kinds: tuple[tuple[str, int], ...]  # the messages' tokens by kind as sent, largest first
    breakpoints: tuple[SentBreakpoint, ...]
    reported_input: int | None  # the API's figure for this request's prompt (None: not given)
    scaled: bool  # the figures are shares of ``reported_input`` (else tokenizer counts)

    @property
    def outside_log(self) -> int:
        """System prompt and tool definitions: what the agent's log does not hold."""
        return self.system_tokens + self.tool_tokens


def _tail_lines(session_id: str | None) -> list[dict[str, Any]]:
    try:
        fd = open_regular(measurement_path(session_id))
    except OSError:
        return []
    with open(fd, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        handle.seek(max(size - TAIL_BYTES, 0))
        raw = handle.read()
    lines = []
    for text in raw.split(b"\n"):
        try:
            value = json.loads(text)
        except ValueError:  # the first line cut by the tail read, a torn line
            continue
        if isinstance(value, dict) and isinstance(value.get("tools"), dict):
            lines.append(value)
    return lines


def _scale(line: dict[str, Any]) -> tuple[float, int | None]:
    reported = reported_prompt(line.get("usage"))
    total = line.get("total_tokens") or 0
    if reported is not None and reported > 0 and total > 0:
        return reported / total, reported
    return 1.0, None


def latest_measurement(session_id: str | None, opening: str | None = None) -> MeasuredPrompt | None:
    """The session's latest measured main-loop request, or None (not proxied). ``opening``:
    the session's opening digest (engine/proxy/opening.py) for an agent that sends no session
    id, whose requests are then those of ``unknown`` that open the same way."""
    if not session_id:
        return None
    lines = _tail_lines(session_id)
    if not lines and opening is not None:
        lines = [line for line in _tail_lines(None) if line.get("opening_sha256") == opening]
    main = [line for line in lines if line["tools"].get("count") and line.get("status") == 200]
    for line in reversed(main):
        try:
            return _prompt_of(session_id, line, len(main))
        except (KeyError, TypeError, ValueError, AttributeError):
            continue  # a line of another shape (another ctxtop version): the one before
    return None


def _prompt_of(session_id: str, line: dict[str, Any], requests: int) -> MeasuredPrompt:
    factor, reported = _scale(line)

    def scaled(value: Any) -> int:
        return round(int(value or 0) * factor)

    return MeasuredPrompt(
        session_id=session_id,
        time=str(line.get("time") or ""),
        protocol=str(line.get("protocol") or ""),
        model=line.get("model"),
        requests=requests,
        system_tokens=scaled(line["system"]["tokens"]),
        system_blocks=tuple(scaled(block["tokens"]) for block in line["system"]["blocks"]),
        tool_tokens=scaled(line["tools"]["tokens"]),
        tools=tuple(
            ToolCost(str(t["name"]), scaled(t["tokens"])) for t in line["tools"]["per_tool"]
        ),
        message_tokens=scaled(line["messages"]["tokens"]),
        kinds=tuple(
            sorted(
                ((str(kind), scaled(tokens)) for kind, tokens in line["messages"]["kinds"].items()),
                key=lambda pair: -pair[1],
            )
        ),
        breakpoints=tuple(
            SentBreakpoint(str(b["at"]), scaled(b["prefix_tokens"]), b.get("ttl"))
            for b in line.get("breakpoints") or []
        ),
        reported_input=reported,
        scaled=reported is not None,
    )

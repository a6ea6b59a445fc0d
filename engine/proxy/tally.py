"""The running measurement of one model request, filled part by part in prompt order.

Text is counted with ``o200k_base`` (Claude's and Gemini's tokenizers are not public), framing
and tools with the chat rules of ``engine.tokens.chat``; the measurement line also holds the
usage the answer reported, which the dashboard scales these counts to."""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from engine.tokens.cache import CachedCounter
from engine.tokens.chat import (
    MESSAGE_BASE_TOKENS,
    TOKENS_PER_TOOL,
    TOOL_SCHEMA_FACTOR,
    TOOLS_BASE_TOKENS,
    image_tokens,
)

ENCODING = "o200k_base"
_counter = CachedCounter(ENCODING)  # memory only: the same system prompt is counted once
_counter_lock = threading.Lock()


def count(text: str) -> int:
    with _counter_lock:
        return _counter.count(text)


def digest(value: Any) -> str:
    """A short hash of a part (to see a part change between requests without its text)."""
    data = (
        value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    )
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@dataclass
class Tally:
    """The running measurement of one request, filled in prompt order (tools, system,
    messages), so a breakpoint's prefix is the running total where it is met."""

    provider: str
    system: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)
    images: int = 0
    messages: int = 0
    breakpoints: list[dict[str, Any]] = field(default_factory=list)
    running: int = 0

    def tool(self, name: str, schema: Any) -> None:
        tokens = TOKENS_PER_TOOL + math.ceil(TOOL_SCHEMA_FACTOR * count(_json(schema)))
        if not self.tools:
            tokens += TOOLS_BASE_TOKENS
        self.tools.append({"name": name, "tokens": tokens, "sha256": digest(schema)})
        self.running += tokens

    def system_block(self, text: str) -> None:
        tokens = count(text)
        self.system.append({"tokens": tokens, "sha256": digest(text)})
        self.running += tokens

    def add(self, kind: str, tokens: int) -> None:
        self.kinds[kind] += tokens
        self.running += tokens

    def text(self, kind: str, text: str) -> None:
        self.add(kind, count(text))

    def image(
        self, width: int | None = None, height: int | None = None, detail: str = "auto"
    ) -> None:
        self.images += 1
        self.add("image", image_tokens(width, height, self.provider, detail))

    def message(self) -> None:
        self.messages += 1
        self.add("framing", MESSAGE_BASE_TOKENS)

    def breakpoint(self, where: str, marker: Any) -> None:
        entry: dict[str, Any] = {"at": where, "prefix_tokens": self.running}
        if isinstance(marker, dict) and isinstance(marker.get("ttl"), str):
            entry["ttl"] = marker["ttl"]
        self.breakpoints.append(entry)

    def figures(self) -> dict[str, Any]:
        system_tokens = sum(block["tokens"] for block in self.system)
        tool_tokens = sum(tool["tokens"] for tool in self.tools)
        message_tokens = sum(self.kinds.values())
        return {
            "encoding": ENCODING,
            "system": {"tokens": system_tokens, "blocks": self.system},
            "tools": {"tokens": tool_tokens, "count": len(self.tools), "per_tool": self.tools},
            "messages": {
                "count": self.messages,
                "tokens": message_tokens,
                "kinds": dict(self.kinds),
            },
            "images": self.images,
            "breakpoints": self.breakpoints,
            "total_tokens": system_tokens + tool_tokens + message_tokens,
        }

"""The running measurement of one model request, filled part by part in prompt order.

Text is counted with ``o200k_base`` (Claude's and Gemini's tokenizers are not public), framing
and tools with the chat rules of ``engine.tokens.chat``; the measurement line also holds the
usage the answer reported, which the dashboard scales these counts to."""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Any

from ctxtop.engine.tokens.chat import (
    MESSAGE_BASE_TOKENS,
    TOKENS_PER_TOOL,
    TOOL_SCHEMA_FACTOR,
    TOOLS_BASE_TOKENS,
    image_tokens,
)
from ctxtop.engine.tokens.encoding import Encoding, get_encoding

ENCODING = "o200k_base"
MEMO_CHARS = 64 * 1024 * 1024  # texts remembered, at most (memory only, never written)


class TextCounts:
    """Token counts keyed by the text itself, kept by the proxy's measurer for its lifetime: a
    request repeats the previous one's texts, and a dict lookup of a str (hashed in C) is
    cheaper than the blake2b digest the shared counter keys by. Measured on
    bench/proxy_latency.py's bodies (0.15-0.6 MB, all texts seen before): measuring a request
    took 2.05 ms of CPU with the shared counter, 1.1 ms with this."""

    def __init__(self, limit: int = MEMO_CHARS) -> None:
        self.limit = limit
        self.counts: OrderedDict[str, int] = OrderedDict()
        self.chars = 0
        self.lock = threading.Lock()
        self.encoding: Encoding | None = None

    def count_all(self, texts: list[str]) -> list[int]:
        with self.lock:
            counts = self.counts
            found = [counts.get(text) for text in texts]
            missing = list({texts[i] for i, value in enumerate(found) if value is None})
            if missing:
                self.encoding = self.encoding or get_encoding(ENCODING)
                for text, tokens in zip(missing, self.encoding.count_batch(missing), strict=True):
                    counts[text] = tokens
                    self.chars += len(text)
            result = [counts[text] for text in texts]  # before an eviction drops any
            while self.chars > self.limit and len(counts) > 1:  # the oldest first
                self.chars -= len(counts.popitem(last=False)[0])
            return result


def digest(text: str) -> str:
    """A short hash of a part (to see a part change between requests without its text)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@dataclass
class Tally:
    """One request's parts in prompt order (tools, system, messages), counted together at the
    end: a breakpoint's prefix is the sum of the parts before its position."""

    provider: str
    # Tokens of each text, in one batch (most are remembered from the previous request).
    counts: TextCounts = field(default_factory=TextCounts)
    system: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    images: int = 0
    messages: int = 0
    breakpoints: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    parts: list[tuple[str, str | int]] = field(default_factory=list)  # (section or kind, text|n)

    def tool(self, name: str, schema: Any) -> None:
        text = _json(schema)
        self.tools.append({"name": name, "tokens": 0, "sha256": digest(text)})
        self.parts.append(("tool", text))

    def system_block(self, text: str) -> None:
        self.system.append({"tokens": 0, "sha256": digest(text)})
        self.parts.append(("system", text))

    def add(self, kind: str, tokens: int) -> None:
        self.parts.append((kind, tokens))

    def text(self, kind: str, text: str) -> None:
        self.parts.append((kind, text))

    def image(
        self, width: int | None = None, height: int | None = None, detail: str = "auto"
    ) -> None:
        self.images += 1
        self.add("image", image_tokens(width, height, self.provider, detail))

    def message(self) -> None:
        self.messages += 1
        self.add("framing", MESSAGE_BASE_TOKENS)

    def breakpoint(self, where: str, marker: Any) -> None:
        """A cache breakpoint after the parts added so far."""
        entry: dict[str, Any] = {"at": where, "prefix_tokens": 0}
        if isinstance(marker, dict) and isinstance(marker.get("ttl"), str):
            entry["ttl"] = marker["ttl"]
        self.breakpoints.append((len(self.parts), entry))

    def _count(self) -> Counter[str]:
        """Fill in the tools', system blocks' and breakpoints' tokens; the tokens by kind."""
        counted = iter(self.counts.count_all([v for _, v in self.parts if isinstance(v, str)]))
        kinds: Counter[str] = Counter()
        tools, blocks = iter(self.tools), iter(self.system)
        marks = iter(self.breakpoints)
        mark = next(marks, None)
        running = 0
        for position, (section, value) in enumerate([*self.parts, ("", 0)]):
            while mark is not None and mark[0] == position:
                mark[1]["prefix_tokens"] = running
                mark = next(marks, None)
            tokens = next(counted) if isinstance(value, str) else value
            if section == "tool":
                tool = next(tools)
                tokens = TOKENS_PER_TOOL + math.ceil(TOOL_SCHEMA_FACTOR * tokens)
                tokens += TOOLS_BASE_TOKENS if tool is self.tools[0] else 0
                tool["tokens"] = tokens
            elif section == "system":
                next(blocks)["tokens"] = tokens
            elif section:
                kinds[section] += tokens
            running += tokens
        return kinds

    def figures(self) -> dict[str, Any]:
        kinds = self._count()
        system_tokens = sum(block["tokens"] for block in self.system)
        tool_tokens = sum(tool["tokens"] for tool in self.tools)
        message_tokens = sum(kinds.values())
        return {
            "encoding": ENCODING,
            "system": {"tokens": system_tokens, "blocks": self.system},
            "tools": {"tokens": tool_tokens, "count": len(self.tools), "per_tool": self.tools},
            "messages": {"count": self.messages, "tokens": message_tokens, "kinds": dict(kinds)},
            "images": self.images,
            "breakpoints": [entry for _, entry in self.breakpoints],
            "total_tokens": system_tokens + tool_tokens + message_tokens,
        }

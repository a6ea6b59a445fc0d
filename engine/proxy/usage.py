"""The usage a model's answer reports, read from a copy of the bytes as they pass (never
holding them back): SSE ``data:`` lines that mention usage, or the whole JSON body when the
answer is not streamed. Normalised to the prompt's total, its cache reads and writes, and the
output."""

from __future__ import annotations

import json
from typing import Any

# A non-streamed answer is kept (for its usage) up to this size.
JSON_KEEP_LIMIT = 16 * 1024 * 1024


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _usage_in(protocol: str, event: Any) -> dict[str, Any] | None:
    if not isinstance(event, dict):
        return None
    if protocol == "gemini":
        found = event.get("usageMetadata")
    else:
        holder = event.get("message") if protocol == "anthropic" else event.get("response")
        found = holder.get("usage") if isinstance(holder, dict) else None
        found = found or event.get("usage")
    return found if isinstance(found, dict) else None


def normalized(protocol: str, raw: dict[str, Any]) -> dict[str, int]:
    """``input_tokens`` (the whole prompt, cached parts included), ``cache_read_tokens``,
    ``cache_write_tokens``, ``output_tokens``."""
    if protocol == "anthropic":
        read, write = (
            _int(raw.get("cache_read_input_tokens")),
            _int(raw.get("cache_creation_input_tokens")),
        )
        prompt, output = (
            _int(raw.get("input_tokens")) + read + write,
            _int(raw.get("output_tokens")),
        )
    elif protocol == "gemini":
        read, write = _int(raw.get("cachedContentTokenCount")), 0
        prompt = _int(raw.get("promptTokenCount"))
        output = _int(raw.get("candidatesTokenCount")) + _int(raw.get("thoughtsTokenCount"))
    else:
        chat = protocol == "openai-chat"
        details = raw.get("prompt_tokens_details" if chat else "input_tokens_details")
        read = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
        write = 0
        prompt = _int(raw.get("prompt_tokens" if chat else "input_tokens"))
        output = _int(raw.get("completion_tokens" if chat else "output_tokens"))
    return {
        "input_tokens": prompt,
        "cache_read_tokens": read,
        "cache_write_tokens": write,
        "output_tokens": output,
    }


def reported_prompt(usage: Any) -> int | None:
    """The whole prompt a measurement line's ``usage`` (``normalized``) says the model
    received: its ``input_tokens``, which already hold the cache reads and writes."""
    prompt = usage.get("input_tokens") if isinstance(usage, dict) else None
    return prompt if isinstance(prompt, int) and not isinstance(prompt, bool) else None


class UsageScanner:
    """Fed each chunk after it was sent on; ``usage`` is what the answer reported (empty when
    it reported none)."""

    def __init__(self, protocol: str) -> None:
        self.protocol = protocol
        self._partial = b""
        self._whole = bytearray()
        self._streamed = False
        self._raw: dict[str, Any] = {}

    def feed(self, chunk: bytes) -> None:
        if not self._streamed and len(self._whole) + len(chunk) <= JSON_KEEP_LIMIT:
            self._whole += chunk
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            if line.startswith(b"data:"):
                self._streamed = True
                self._whole.clear()
                if b"sage" in line:  # usage / usageMetadata: only those lines are decoded
                    self._take(line[5:])

    def _take(self, data: bytes) -> None:
        try:
            event = json.loads(data)
        except ValueError:
            return
        events = event if isinstance(event, list) else [event]  # Gemini's JSON array
        for item in events:
            found = _usage_in(self.protocol, item)
            if found:
                # Anthropic reports the prompt at the start and the output at the end.
                self._raw.update({k: v for k, v in found.items() if v is not None})

    @property
    def usage(self) -> dict[str, int]:
        if not self._streamed and self._whole:
            self._take(bytes(self._whole))
            self._whole.clear()
        return normalized(self.protocol, self._raw) if self._raw else {}
